"""How requests travel: :mod:`~harness.transport.send` (the endpoint, sending, retries),
:mod:`~harness.transport.live` (the pooled live transport), :mod:`~harness.transport.limits` (rate
limits), :mod:`~harness.transport.credentials` (keys and what is masked) and
:mod:`~harness.transport.cassette` (replay and record through vcrpy cassettes)."""
