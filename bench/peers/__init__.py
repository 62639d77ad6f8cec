"""Helpers of bench_peers.py: installing the peers, and the fake server they talk to."""
