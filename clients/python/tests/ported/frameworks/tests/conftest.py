"""Not ported: the SDK's own conftest sets up tracing for its test processor; here tracing is off (no network)."""

from agents import set_tracing_disabled

set_tracing_disabled(True)
