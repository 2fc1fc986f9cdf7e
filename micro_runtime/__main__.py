import sys


def _main() -> int:
    try:
        from .tools.cli import main
    except KeyboardInterrupt:      # Ctrl-C while the command is still loading
        print("error: interrupted", file=sys.stderr)
        return 130
    return main()


sys.exit(_main())
