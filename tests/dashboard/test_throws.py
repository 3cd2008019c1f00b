"""A vision throw becomes a table throw (``kosti.dashboard.throws``): the photo is encoded there, once, before the
game's lock is taken, and the stored photo is that encoding."""

from __future__ import annotations

import cv2
import numpy as np

from kosti.dashboard.throws import THUMB_WIDTH, TableDie, TableThrow, throw_from_pipeline
from kosti.vision.throws import Die, Throw


def test_a_camera_throw_carries_its_photo_encoded_when_it_becomes_a_table_throw():
    frame = np.full((300, 480, 3), 60, np.uint8)
    frame[100:200, 100:200] = 250
    vision = Throw(frame_index=3, time_s=1.5, dice=[Die(5, 0.9, (100.0, 100.0, 200.0, 200.0))], image=frame)
    thr = throw_from_pipeline(vision)
    assert thr.jpeg is not None and thr.thumb is not None  # before any session sees it
    photo = cv2.imdecode(np.frombuffer(thr.jpeg, np.uint8), cv2.IMREAD_COLOR)
    thumb = cv2.imdecode(np.frombuffer(thr.thumb, np.uint8), cv2.IMREAD_COLOR)
    assert photo.shape == frame.shape and thumb.shape[1] == THUMB_WIDTH
    assert abs(int(photo[150, 150, 0]) - 250) < 8 and abs(int(photo[20, 20, 0]) - 60) < 8
    assert thr.photos() == (thr.jpeg, thr.thumb)  # not encoded again


def test_a_throw_made_by_hand_is_encoded_at_first_use_and_one_without_an_image_has_none():
    assert TableThrow([TableDie(1, 0.9, [0, 0, 9, 9])]).photos() == (None, None)
    thr = TableThrow([TableDie(1, 0.9, [0, 0, 9, 9])], image=np.zeros((60, 80, 3), np.uint8))
    jpeg, thumb = thr.photos()
    assert jpeg is not None and jpeg[:2] == b"\xff\xd8" and thumb is not None and thumb[:2] == b"\xff\xd8"
