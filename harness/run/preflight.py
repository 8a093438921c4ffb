"""The preflight of an outside (``cmd:``) engine: its first item diagnosed before a run starts.

A broken command (not found, not executable, non-zero exit, no answer, an
answer against the schema) then stops the verb before hours of work, with the
full message (:class:`defects4warp.engines.command.EngineContractError`). It
sits above the engines and the runner: it diagnoses an item the way a run does
(:func:`defects4warp.run.runner.diagnose_item`) and reads the contract failure the
engine records (:func:`defects4warp.engines.command.contract_failure`).
"""

from __future__ import annotations

from ..engines.command import CommandEngine, EngineContractError, contract_failure
from .runner import diagnose_item, skipped_record


def preflight(engine, items: list, device: str = "cpu", warp_version: str | None = None, python=None):
    """Diagnose the first item that is not skipped before a run starts.

    Parameters
    ----------
    engine : Engine
        Any engine; only :class:`CommandEngine` is checked (others return None).
    items : list[defects4warp.run.runner.RunItem]
    device, warp_version, python
        As for :func:`defects4warp.run.runner.diagnose_item`.

    Returns
    -------
    (index, record) or None
        The first item's index and its scored result record, for the run to
        reuse instead of diagnosing it again; None when nothing was checked.

    Raises
    ------
    EngineContractError
        When the command breaks the contract on that item (not found, not
        executable, non-zero exit, no answer, an answer that is not JSON or
        fails the schema); the message holds the full error with the tails of
        the tool's stdout and stderr.
    """
    if not isinstance(engine, CommandEngine):
        return None
    for i, it in enumerate(items):
        if skipped_record(it, python) is not None:
            continue
        rec = diagnose_item(engine, it, device, warp_version, python)
        if contract_failure(rec["diagnosis"]):
            raise EngineContractError(f"the engine {engine.name} failed on the first item ({it.label}), so the "
                                      f"run was not started:\n{rec['diagnosis']['error']}")
        return i, rec
    return None
