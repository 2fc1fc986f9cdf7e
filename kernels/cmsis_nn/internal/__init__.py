"""CMSIS-NN arithmetic shared by the CMSIS-NN kernel variants (no registrations)."""
