"""The reference implementation: written to teach, mirroring how a broker is built."""
