"""The application layer: wires the core to the adapters (daemon loop, apply, probe, doctor, swap)."""
