"""The teach flow in a browser with custom-face dice (issue 41 item 5), with nothing stood in.

The whole dashboard (``create_app``: live pipeline, game, teach and review pages, the model hot-swap) runs on a
rendered table whose dice carry a skull for 1 and an emblem for 6 — faces the shipped classifier has no class
for (it turns every skull and most emblems down as "not sure", and reads some emblems as 2). In Chromium:

1. ``/teach``: the dice are thrown :data:`THROWS` times; each settled throw, read live, is saved.
2. ``/review``: the grey boxes the reader turned down are kept with one tap, a missed die is drawn by hand,
   each face is set with its key, Enter saves.
3. Train: the real ``kosti train`` runs as a subprocess (its defaults but :data:`TRAIN_OPTIONS`, so that CI's
   2 cores finish it in a few minutes), the page shows its progress, then the before/after table and the gate's
   verdict; the new version is activated in the registry of this test.
4. The live view reads the new dice: the running table swaps to the new reader by itself, and a throw of
   skulls and emblems on the virtual table is shown with its true faces on the game page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from waiting import wait_for

from kosti.dashboard.app import DashboardConfig, create_app
from kosti.dashboard.teach import TeachJob
from kosti.datasets import capture as cap
from kosti.registry import Registry, reader_files
from kosti.sim.render import DieStyle
from kosti.sim.virtual import VirtualTableSource
from kosti.vision.reader import DiceReader

#: Blue dice with a skull for 1 and an emblem for 6 (``benchmarks/proof_new_dice.py``'s ``skull_emblem``).
CUSTOM = DieStyle("skull_emblem", (170, 90, 40), (235, 235, 235), corner_radius=0.18,
                  marks=((1, "skull"), (6, "emblem")))
#: Throws saved: half are held back by ``kosti train`` to judge the candidate (its minimum of 10).
THROWS = 20
#: ``kosti train`` options besides ``--data --json --work`` (TeachJob's command): the classifier pass alone with
#: 5 epochs (the default chooses 5 or 12 by itself, and the detector pass when dice are missed; each default is
#: proven by benchmarks/proof_new_dice.py).
TRAIN_OPTIONS = ("--classifier-only", "--epochs-cls", "5")
#: The faces thrown for the live check after teaching: two skulls, two emblems and a pip face.
LIVE_FACES = [1, 6, 1, 6, 3]


@pytest.mark.slow
def test_teach_custom_dice_in_the_browser(tmp_path: Path, serve, browser, monkeypatch) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # this test's model registry, kosti train's too
    reg = Registry()
    shipped = reader_files(registry=reg)
    assert shipped[2] == "shipped"
    src = VirtualTableSource(n_dice=5, size=(1280, 720), fps=10, realtime=True, tumble_s=0.6, die_side=56.0,
                             background="wood", style=CUSTOM, seed=7, initial_throw=False)  # type: ignore[arg-type]
    root = tmp_path / "cap"
    job = TeachJob(root, tmp_path, lambda data, work: [sys.executable, "-m", "kosti", "train", "--data", str(data),
                                                       "--json", "--work", str(work), *TRAIN_OPTIONS])
    app = create_app(DashboardConfig(
        db_path=tmp_path / "k.db", source_obj=src, reader=DiceReader(shipped[0], shipped[1]), review_dir=root,
        reader_reload=(lambda: DiceReader(*reader_files(registry=Registry())[:2]), reg.change_token), teach_job=job))
    live = app.state.table.live
    shipped_reader = live.reader
    url = serve(app).url
    d = browser(1200, 1000, lang="en")
    wait = WebDriverWait(d, 30)

    # 1. Throw and save: each settled throw as the live table read it.
    d.get(url + "/teach")
    truth: dict[str, tuple[list[int], list[np.ndarray]]] = {}  # photo id: the faces and boxes thrown
    for k in range(THROWS):
        before = live.last_settled
        src.throw()
        wait_for(f"throw {k + 1} to settle and be read", lambda b=before: live.last_settled is not b
                 and src.last_throw is not None and src.last_throw.boxes is not None, 30)
        thrown = src.last_throw
        d.find_element(By.ID, "btn-capture").click()
        wait.until(lambda _, n=k + 1: d.find_element(By.ID, "captured").text.startswith(f"{n} photo"))
        (new_id,) = set(cap.list_ids(root)) - set(truth)
        truth[new_id] = ([die.face for die in thrown.dice], list(thrown.boxes))
    # What the shipped reader made of the skulls and emblems, live: the faces saved with each photo.
    read_marks = sum(int(np.isin(cap.load(root, i, with_image=False).dice.value, (1, 6)).sum()) for i in truth)
    thrown_marks = sum(f in (1, 6) for faces, _ in truth.values() for f in faces)
    assert thrown_marks >= 20 and read_marks <= 0.2 * thrown_marks, (read_marks, thrown_marks)

    # 2. Review: keep every grey box, draw one die by hand, set each face with its key, Enter saves.
    d.find_element(By.ID, "review-link").click()
    offered = drawn = 0
    done: set[str] = set()
    for _ in range(THROWS):
        # The next photo is drawn once its id shows (the page renders its boxes first; until then the status
        # line still shows the photo just saved as "to check", over the old boxes).
        image_id = wait.until(lambda _: (i := d.find_element(By.ID, "img-info").text.split(" · ")[0]) in truth
                              and i not in done and d.find_element(By.ID, "img-status").text == "to check" and i)
        done.add(image_id)
        rec = cap.load(root, image_id, with_image=False)
        boxes = truth[image_id]
        offered += len(d.find_elements(By.CSS_SELECTOR, "#boxes g.suggest"))
        while d.find_elements(By.CSS_SELECTOR, "#boxes g.suggest rect.box"):
            n = len(d.find_elements(By.CSS_SELECTOR, "#boxes g.die"))
            _tap_suggested(d, rec.width, rec.height)
            wait.until(lambda _, n=n: len(d.find_elements(By.CSS_SELECTOR, "#boxes g.die")) == n + 1)
        if not drawn:  # a die the camera missed: remove its box, then draw it round the die by hand
            d.execute_script("select(0)")
            ActionChains(d).send_keys("\ue017").perform()  # Delete
            shown = d.execute_script("return state.dice.map((x) => x.box)")
            gone = next(b for b in boxes[1] if not any(_inside(s, b) for s in shown))
            _draw(d, gone, rec.width, rec.height)
            drawn = 1
        shown = d.execute_script("return state.dice.map((x) => x.box)")
        for i, box in enumerate(shown):
            face = [f for f, b in zip(*boxes) if _inside(box, b)]
            assert len(face) == 1, f"a box on no die or on two: {box}"
            d.execute_script("select(arguments[0])", i)
            ActionChains(d).send_keys(str(face[0])).perform()
        ActionChains(d).send_keys("\ue007").perform()  # Enter: save as reviewed, open the next
        wait.until(lambda _, i=image_id: cap.load(root, i, with_image=False).reviewed)
        got = cap.load(root, image_id, with_image=False)
        assert sorted(int(v) for v in got.dice.value) == sorted(boxes[0]), "every die labelled with its true face"
    assert offered >= 10, f"the dice the shipped reader turned down were not offered to confirm ({offered})"

    # 3. Train: the real kosti train; progress, then the before/after table and the verdict.
    d.get(url + "/teach")
    wait.until(lambda _: d.find_element(By.ID, "btn-train").is_enabled())
    d.find_element(By.ID, "btn-train").click()
    WebDriverWait(d, 600).until(lambda _: re.search(r"epoch \d+ of 5", d.find_element(By.ID, "progress-text").text))
    WebDriverWait(d, 900).until(lambda _: d.find_element(By.ID, "step-result").is_displayed())
    result = job.result
    assert result is not None and job.state == "done", (job.state, job.error)
    text = d.find_element(By.ID, "result").text
    assert result["activated"] is True, f"the gate refused the taught reader: {result.get('refused')}"
    assert f"New reader {result['version']} is active" in text and "on ordinary dice (reference photos)" in text
    before, after = result["before"], result["after"]
    assert isinstance(before, dict) and isinstance(after, dict)
    for key in ("die_accuracy", "image_exact"):
        assert f"{before[key]:.3f}" in text and f"{after[key]:.3f}" in text, (key, text)  # as the page shows them
    # Better on the held-back photos of these dice (two runs: exact throws 0.0 → 0.6 and 0.2 → 0.7), as the gate saw.
    assert all(after[k] >= before[k] for k in ("recall", "die_accuracy")), (before, after)  # type: ignore[operator]
    assert after["image_exact"] >= before["image_exact"] + 0.2, (before, after)  # type: ignore[operator]
    assert reg.active_version() == result["version"]
    d.find_element(By.ID, "lang-toggle").click()
    wait.until(lambda _: f"Новая модель {result['version']} включена" in d.find_element(By.ID, "result").text)

    # 4. The live view reads the new dice: the table swaps readers by itself; a throw on the game page.
    wait_for("the live table to load the new reader", lambda: live.reader is not shipped_reader, 20)
    r = httpx.post(url + "/api/games", json={"players": ["Ann", "Boris"], "preset": "classic"}, timeout=10)
    assert r.status_code == 201, r.text
    d.get(url + "/")
    wait.until(lambda _: d.find_element(By.ID, "btn-throw").is_enabled())
    box = d.find_element(By.ID, "throw-faces")
    box.clear()
    box.send_keys(" ".join(map(str, LIVE_FACES)))
    d.find_element(By.ID, "btn-throw").click()
    WebDriverWait(d, 30).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#dice .die")
                               or d.find_element(By.ID, "pending").is_displayed())
    assert not d.find_element(By.ID, "pending").is_displayed(), "the taught reader was unsure of a die"
    faces = sorted(int(e.get_attribute("data-value")) for e in d.find_elements(By.CSS_SELECTOR, "#dice .die"))
    assert faces == sorted(LIVE_FACES), f"the live view read {faces}, thrown {sorted(LIVE_FACES)}"


def _inside(box, die) -> bool:
    """The middle of ``box`` lies on the die whose box is ``die`` (both x1 y1 x2 y2 in pixels)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return die[0] <= cx <= die[2] and die[1] <= cy <= die[3]


def _tap_suggested(d, width: int, height: int) -> None:
    """Tap the first grey box where no die's box lies over it (a box the reader proposed can reach under a
    die's box, drawn on top), as a person taps the part of it they see."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    box, dice = d.execute_script("return [state.suggested[0].box, state.dice.map((x) => x.box)]")
    spots = [(box[0] + (box[2] - box[0]) * fx, box[1] + (box[3] - box[1]) * fy)
             for fy in (0.5, 0.7, 0.85, 0.3) for fx in (0.5, 0.3, 0.7, 0.15, 0.85)]
    free = [p for p in spots if not any(b[0] - 4 <= p[0] <= b[2] + 4 and b[1] - 30 <= p[1] <= b[3] + 4 for b in dice)]
    assert free, f"the grey box {box} lies wholly under the dice {dice}: it cannot be tapped"
    svg = d.find_element(By.ID, "boxes")
    r = svg.rect
    x, y = free[0]
    ActionChains(d).move_to_element_with_offset(svg, -r["width"] / 2 + x * r["width"] / width,
                                                -r["height"] / 2 + y * r["height"] / height).click().perform()


def _draw(d, die, width: int, height: int) -> None:
    """Drag on the review page's picture from one corner of ``die`` to the other (a box drawn by hand)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    svg = d.find_element(By.ID, "boxes")
    r = svg.rect
    sx, sy = r["width"] / width, r["height"] / height
    w, h = (die[2] - die[0]) * sx, (die[3] - die[1]) * sy
    n = len(d.find_elements(By.CSS_SELECTOR, "#boxes g.die"))
    ActionChains(d).move_to_element_with_offset(svg, -r["width"] / 2 + die[0] * sx, -r["height"] / 2 + die[1] * sy) \
        .click_and_hold().move_by_offset(int(w / 2), int(h / 2)).move_by_offset(int(w / 2), int(h / 2)) \
        .release().perform()
    assert len(d.find_elements(By.CSS_SELECTOR, "#boxes g.die")) == n + 1, "the drawn box was not added"
