"""Persistence: a game survives dropping the app, and a killed process loses nothing it had committed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kosti.dashboard.store import Store
from kosti.engine import GameState


def test_game_resumes_intact_after_restart(make_client, throw, start_game, scores):
    c1 = make_client()
    gid = start_game(c1)
    t1 = c1.app.state.table
    t1.submit_throw(throw([1, 1, 1, 5, 3]))
    c1.post(f"/api/games/{gid}/bank")                      # Ann 105
    t1.submit_throw(throw([5, 2, 2, 3, 4]))                # Boris: 5 in the turn, 4 dice left
    t1.submit_throw(throw([1, 0, 2, 3], status="uncertain"))  # waiting for the table
    before = c1.get("/api/state").json()
    c1.app.state.store.close()                             # drop the app
    del c1, t1

    c2 = make_client()                                     # new app, same database
    after = c2.get("/api/state").json()
    assert after["game"]["id"] == gid
    assert scores(after) == {"Ann": 105, "Boris": 0}
    assert after["state"] == before["state"]
    assert after["turn_no"] == before["turn_no"] == 2
    assert after["pending"]["faces"] == [1, 0, 2, 3] and after["pending"]["id"] == before["pending"]["id"]
    # Play goes on where it stopped: confirm the corrected throw, bank, undo across the restart.
    c2.post(f"/api/games/{gid}/fix", json={"die_index": 1, "value": 5})
    s = c2.post(f"/api/games/{gid}/confirm").json()
    assert s["state"]["turn"]["turn_points"] == 5 + 15
    s = c2.post(f"/api/games/{gid}/undo").json()
    assert s["state"]["turn"]["turn_points"] == 5 and s["state"]["to_move"] == "Boris"
    s = c2.post(f"/api/games/{gid}/undo").json()
    s = c2.post(f"/api/games/{gid}/undo").json()
    assert scores(s) == {"Ann": 0, "Boris": 0} and s["state"]["to_move"] == "Ann"  # the bank from before the restart


_WORKER = textwrap.dedent(
    """
    import sys
    from kosti.dashboard.store import Store
    from kosti.dashboard.table import TableDie, TableService, TableThrow

    table = TableService(Store(sys.argv[1]))
    table.session.new_game(["Ann", "Boris"], "classic")
    n = 0
    while True:
        st = table.session.state
        if st.moves().bank:
            table.session.bank(actor="worker")
        else:  # one 1 and dead dice: 10 points a throw, never a bust
            faces = ([1] + [6, 4, 3, 2, 6])[: st.dice_to_throw]
            t = TableThrow([TableDie(f, 0.99, [40.0 * i, 0, 40.0 * i + 30, 30]) for i, f in enumerate(faces)])
            assert table.submit_throw(t, actor="worker")["applied"]
        n += 1
        print(n, flush=True)  # printed only after the commit returned
    """
)


def test_killed_process_loses_nothing_committed(tmp_path: Path):
    db = tmp_path / "kill.db"
    proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(db)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    last = 0
    deadline = time.monotonic() + 60
    try:
        while last < 40 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            last = int(line.split()[0])
    finally:
        proc.send_signal(signal.SIGKILL)  # no clean shutdown: mid-transaction at any moment
        proc.wait(10)
    assert last >= 40, "the worker did not get going"
    store = Store(db)
    game = store.latest_active_game()
    assert game is not None
    actions = store.actions(game.id)
    # Every action the worker reported is there (it may have committed one more before dying).
    assert len(actions) >= last
    # The stored game state is exactly the state after the last stored action: no torn write.
    assert json.loads(game.state_json) == json.loads(actions[-1].state_after_json)
    for a, b in zip(actions, actions[1:]):
        assert json.loads(a.state_after_json) == json.loads(b.state_before_json)
    GameState.from_json(json.loads(game.state_json))  # and it restores
    store.close()
