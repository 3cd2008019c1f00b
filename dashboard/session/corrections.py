"""The pending-throw and correction policy of the game session: a throw held for confirmation is fixed die by die,
a die taken out, confirmed (with all its faces) or discarded; the latest applied throw is fixed by re-applying its
roll; Undo takes back one step at a time (an edit of the pending throw, a fix, an action). Confirmed and corrected
throws of real dice are saved as training data (:func:`kosti.datasets.capture.save_correction`)."""

from __future__ import annotations

import logging

from kosti.dashboard.errors import Conflict, Invalid, TableError
from kosti.dashboard.json_values import JsonObject, json_faces
from kosti.dashboard.session.core import SessionCore, announced
from kosti.dashboard.store import ActionRow, ThrowRow
from kosti.dashboard.views import (
    action_text,
    faces_text,
    state_from_json,
    throw_view,
)
from kosti.engine.game import Roll

log = logging.getLogger(__name__)


class ThrowCorrections(SessionCore):
    """The pending throw and the corrections of :class:`kosti.dashboard.session.GameSession` (see the module's text)."""

    def _pending_or_409(self) -> ThrowRow:
        assert self.game_id is not None
        p = self.store.pending_throw(self.game_id)
        if p is None:
            raise Conflict("no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
        return p

    def _remember_pending(self, p: ThrowRow) -> None:
        """Keep the pending throw's dice before an edit, so that Undo can take the edit back."""
        self._pending_edits = [e for e in self._pending_edits if e[0] == p.id]
        self._pending_edits.append((p.id, list(p.faces), [list(b) for b in p.boxes], list(p.confidences)))

    def _pending_changed(self, throw_id: int) -> None:
        row = self.store.get_throw(throw_id)
        self.last_throw = throw_view(self.store, row) if row else self.last_throw

    @announced
    def fix(self, die_index: int, value: int, game_id: int | None = None, actor: str | None = None) -> None:
        """Correct one die (index into the throw's dice, value 1–6).

        On a pending throw the value is changed (``die_index`` = the number of dice adds a die the camera
        missed) and the throw stays pending until confirmed. On the latest applied throw (when it is still
        the latest action) the roll is re-applied with the corrected faces; Undo then restores the throw as
        it was before the fix (:meth:`undo`).
        """
        if not 1 <= int(value) <= 6:
            raise Invalid(f"a die shows 1–6, not {value}", f"на кости 1–6, а не {value}")
        with self.lock:
            self.require(game_id)
            assert self.game_id is not None
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                faces, boxes, confs = list(p.faces), [list(b) for b in p.boxes], list(p.confidences)
                if die_index == len(faces):  # a die the camera missed
                    if len(faces) >= 12:
                        raise Invalid("a throw has at most 12 dice", "в броске не больше 12 костей")
                    faces.append(int(value))  # no box: the camera never saw it (no training label is made)
                    confs.append(1.0)
                    old = None
                elif 0 <= die_index < len(faces):
                    old = faces[die_index]
                    faces[die_index] = int(value)
                else:
                    raise Invalid(f"there is no die {die_index + 1} in this throw",
                                     f"в этом броске нет кости {die_index + 1}")
                self._remember_pending(p)
                self.store.add_correction(p.id, self.game_id, die_index, old, int(value), actor)
                self.store.set_throw_dice(p.id, faces, boxes[:len(faces)], confs[:len(faces)])
                return self._pending_changed(p.id)
            last = self._fixable_action()
            if last is None:
                raise Conflict("only the latest throw can be fixed; undo back to it first",
                                 "исправить можно только последний бросок; сначала отмените действия после него")
            assert last.throw_id is not None  # _fixable_action: a throw's roll
            row = self.store.get_throw(last.throw_id)
            assert row is not None
            faces = json_faces(last.payload["faces"])
            if not 0 <= die_index < len(faces):
                raise Invalid(f"there is no die {die_index + 1} in this throw",
                                 f"в этом броске нет кости {die_index + 1}")
            old = faces[die_index]
            faces[die_index] = int(value)
            self._reapply_roll(last, faces, {"faces": list(faces), "corrected": True, "original_faces": list(json_faces(last.payload["faces"]))},
                               actor)
            self.store.add_correction(row.id, self.game_id, die_index, old, int(value), actor)
            self.store.set_throw_resolution(row.id, "corrected")
            self._save_correction(row.id)
            return self._pending_changed(row.id)

    def _fixable_action(self) -> ActionRow | None:
        """The game's latest live action when it is a throw's roll (the one applied throw :meth:`fix` may still
        change), else ``None``: after a Stop, a keep or any other later action only Undo reaches the throw."""
        if self.game_id is None:
            return None
        last = self.store.last_live_action(self.game_id)
        return last if last is not None and last.kind == "roll" and last.throw_id is not None else None

    def fixable_throw_id(self) -> int | None:
        """Id of the applied throw that Fix can still correct (:meth:`_fixable_action`), else ``None``; the page
        offers Fix of the last throw only for this throw (a pending throw is fixed in place, always)."""
        with self.lock:
            act = self._fixable_action()
            return act.throw_id if act is not None else None

    def _reapply_roll(self, last: ActionRow, faces: list[int], payload: JsonObject, actor: str | None) -> None:
        """Replace roll action ``last`` by ``Roll(faces)`` applied to the state before it (turn bookkeeping
        rebuilt by :meth:`Store.record_action`); the throw's faces follow. Caller holds the lock."""
        base, throw_id = state_from_json(last.state_before_json), last.throw_id
        assert throw_id is not None, last  # a roll from the camera (the caller checked)
        saved_turn = self.turn_no
        self.turn_no = last.turn_no
        try:
            self._apply("roll", Roll(tuple(faces)), payload, actor, throw_id=throw_id, supersedes=last.id, base=base)
        except TableError:
            self.turn_no = saved_turn
            raise
        self.store.update_throw_faces(throw_id, faces)

    @announced
    def remove_die(self, die_index: int, game_id: int | None = None, actor: str | None = None) -> None:
        """Take die ``die_index`` (0-based) out of the pending throw: the camera saw a die that was not
        thrown (a set-aside die, a die off the tray). 409 without a pending throw, 422 for a bad index."""
        with self.lock:
            self.require(game_id)
            p = self._pending_or_409()
            assert self.game_id is not None
            if not 0 <= die_index < len(p.faces):
                raise Invalid(f"there is no die {die_index + 1} in this throw",
                                 f"в этом броске нет кости {die_index + 1}")
            faces, boxes, confs = list(p.faces), [list(b) for b in p.boxes], list(p.confidences)
            old = faces.pop(die_index)
            if die_index < len(boxes):
                boxes.pop(die_index)
            if die_index < len(confs):
                confs.pop(die_index)
            self._remember_pending(p)
            # new_value 0 = the die was removed (corrections.new_value is NOT NULL).
            self.store.add_correction(p.id, self.game_id, die_index, old, 0, actor)
            self.store.set_throw_dice(p.id, faces, boxes, confs)
            return self._pending_changed(p.id)

    @announced
    def confirm(self, faces: list[int] | None = None, game_id: int | None = None, actor: str | None = None) -> None:
        """Accept the pending throw (optionally with all its faces given, any number of them: a die the
        camera saw but nobody threw is left out) and apply it as ``Roll``."""
        with self.lock:
            st = self.require(game_id)
            assert self.game_id is not None
            p = self._pending_or_409()
            cur = list(p.faces)
            if faces is not None:
                new = [int(f) for f in faces]
                if any(f not in range(1, 7) for f in new):
                    raise Invalid("each die shows 1–6: set every die or remove it",
                                     "на каждой кости от 1 до 6: укажите каждую кость или уберите её")
                self._check_count(st, len(new))
                self._remember_pending(p)
                for i, v in enumerate(new):
                    old = cur[i] if i < len(cur) else None
                    if old != v:
                        self.store.add_correction(p.id, self.game_id, i, old, v, actor)
                boxes = [list(b) for b in p.boxes][:len(new)]  # dice typed beyond the camera's have no box
                confs = list(p.confidences)[:len(new)] + [1.0] * max(0, len(new) - len(p.confidences))
                cur = new
                self.store.set_throw_dice(p.id, cur, boxes, confs)
            bad = [i for i, f in enumerate(cur) if f not in range(1, 7)]
            if bad:
                raise Conflict(f"die {bad[0] + 1} is unread: set its value or remove it",
                                 f"кость {bad[0] + 1} не распознана: укажите её значение или уберите её")
            self._check_count(st, len(cur))
            self._apply("roll", Roll(tuple(cur)), {"faces": list(cur), "confirmed": True}, actor, throw_id=p.id)
            self._pending_edits.clear()
            if any(c["throw_id"] == p.id for c in self.store.corrections(self.game_id)):
                self.store.set_throw_resolution(p.id, "corrected")
            self._save_correction(p.id)
            return self._pending_changed(p.id)

    def _save_correction(self, throw_id: int) -> None:
        """Save a throw the table confirmed or corrected into :attr:`corrections_dir` for retraining
        (the settled frame and the faces the players gave, boxes from the camera). Never fails the game."""
        if self.corrections_dir is None or not self.frames_are_real():
            return
        row = self.store.get_throw(throw_id)
        jpeg = self.store.throw_image(throw_id)
        if row is None or jpeg is None:
            return
        dice = [{"value": f, "box": row.boxes[i] if i < len(row.boxes) else None,
                 "confidence": row.confidences[i] if i < len(row.confidences) else None}
                for i, f in enumerate(row.faces)]
        try:
            from kosti.datasets.capture import save_correction

            save_correction(self.corrections_dir, jpeg, dice, model=self.model_name() or None,
                            key=f"game{row.game_id}-throw{row.id}")
        except Exception as exc:  # noqa: BLE001 - training data is a bonus; the game goes on
            log.warning("could not save the corrected throw %s for retraining: %s", throw_id, exc)

    @announced
    def discard(self, game_id: int | None = None, actor: str | None = None) -> None:
        """Drop the pending throw (the dice will be thrown again)."""
        with self.lock:
            self.require(game_id)
            assert self.game_id is not None
            if self.store.resolve_pending(self.game_id, "discarded") == 0:
                raise Conflict("no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
            self._pending_edits.clear()

    @announced
    def undo(self, game_id: int | None = None, actor: str | None = None) -> None:
        """Undo the latest step, one at a time:

        * an edit of the pending throw (fix / add / remove a die) → the throw's dice before that edit;
        * a pending throw without edits → dropped (``discarded``);
        * a fix of an applied throw → the throw as it was before the fix (re-applied; the dice are still on
          the table, so the fix is what was wrong, not the throw);
        * any other action → the stored state before it.
        """
        with self.lock:
            if game_id is not None and game_id != self.game_id:
                self.require(game_id)
            if self.game_id is None:
                raise Conflict("no game in progress", "игра не начата")
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                edits = [e for e in self._pending_edits if e[0] == p.id]
                if edits:
                    _, faces, boxes, confs = edits[-1]
                    self._pending_edits.remove(edits[-1])
                    self.store.set_throw_dice(p.id, faces, boxes, confs)
                    self._event("undo", p.player or "", f"Edit undone: the throw reads {faces_text(faces)} again",
                                f"Исправление отменено: в броске снова {faces_text(faces)}")
                    return self._pending_changed(p.id)
                self.store.resolve_pending(self.game_id, "discarded")
                self._event("undo", p.player or "", f"Throw {faces_text(p.faces)} dropped",
                            f"Бросок {faces_text(p.faces)} сброшен")
                return
            last = self.store.last_live_action(self.game_id)
            if last is not None and last.kind == "roll" and last.payload.get("original_faces") and last.throw_id is not None:
                orig = json_faces(last.payload["original_faces"])
                self._reapply_roll(last, orig, {"faces": list(orig), "restored": True}, actor)
                self.store.set_throw_resolution(last.throw_id, "applied")
                self._event("undo", last.player or "", f"Fix undone: the throw is {faces_text(orig)} again",
                            f"Исправление отменено: бросок снова {faces_text(orig)}")
                self.last_error = None
                return self._pending_changed(last.throw_id)
            act = self.store.undo_last(self.game_id)
            if act is None:
                raise Conflict("nothing to undo", "отменять нечего")
            self.state = state_from_json(act.state_before_json)
            self.turn_no = act.turn_no
            en, ru = action_text(act.kind, act.payload)
            self._event("undo", act.player or "", f"Undone: {en}", f"Отменено: {ru}")
            if act.throw_id is not None and self.last_throw and self.last_throw.get("id") == act.throw_id:
                row = self.store.get_throw(act.throw_id)
                self.last_throw = throw_view(self.store, row) if row else None
            self.last_error = None
            self._state_changed()
