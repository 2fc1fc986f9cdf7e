import os

import pytest
from hypothesis import HealthCheck, settings

from tests.oracle import shared_oracle

#: hypothesis examples per differential test; raise it for long local runs, e.g.
#: MICRO_RUNTIME_EXAMPLES=500 pytest tests/
EXAMPLES = int(os.environ.get("MICRO_RUNTIME_EXAMPLES", "20"))

settings.register_profile(
    "micro", max_examples=EXAMPLES, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much])
settings.load_profile("micro")


@pytest.fixture(scope="session")
def oracle():
    o = shared_oracle()
    yield o
    o.close()
