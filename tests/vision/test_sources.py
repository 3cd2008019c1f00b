"""Frame sources: video files, photo folders, the virtual table, newest-frame grabbing, reconnection."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from fake_clock import FakeClock

from kosti.sim.replay import FolderSource
from kosti.sim.virtual import VirtualTableSource
from kosti.vision.sources import (
    EndOfStream,
    Frame,
    OpenCVSource,
    PicameraSource,
    ReconnectingSource,
    SourceError,
    VideoFileSource,
    open_source,
)
from kosti.vision.video_source import FrameFolderSource


def numbered(n: int, w: int = 160, h: int = 120) -> np.ndarray:
    """A frame whose mean brightness encodes ``n`` (0–25) — survives lossy video codecs."""
    img = np.full((h, w, 3), 10 * n, np.uint8)
    return img


def level(img: np.ndarray) -> int:
    return int(round(float(img.mean()) / 10))


# -- video files ------------------------------------------------------------------------------------
@pytest.fixture
def video(tmp_path: Path) -> Path:
    path = tmp_path / "clip.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (160, 120))
    assert vw.isOpened()
    for i in range(20):
        vw.write(numbered(i))
    vw.release()
    return path


def test_video_file_fast_reads_every_frame_with_media_time(video: Path):
    with VideoFileSource(video, realtime=False) as src:
        frames = list(src)
        assert src.nominal_fps == pytest.approx(25.0)
        with pytest.raises(EndOfStream):
            src.read()
    assert [level(f.image) for f in frames] == list(range(20))
    assert [f.index for f in frames] == list(range(20))
    assert [f.t for f in frames] == pytest.approx([i / 25.0 for i in range(20)])
    assert frames[0].image.shape == (120, 160, 3) and frames[0].image.dtype == np.uint8


def test_video_file_realtime_is_paced_and_fps_is_measured(video: Path, monkeypatch):
    """Real-time replay sleeps until each frame's media time (frame k is due k / 25 s after the first) and the
    measured rate is the delivery rate. On a fake clock both are exact, whatever the machine's speed."""
    from kosti.vision import frame_source

    clock = FakeClock().install(monkeypatch, frame_source)
    src = VideoFileSource(video, realtime=True)
    t0 = clock.now
    with src:
        for _ in range(11):
            src.read()
        assert clock.now - t0 == pytest.approx(10 / 25.0)  # frame 10 is due at 0.4 s: paced, and not slower
        assert src.fps == pytest.approx(25.0)  # measured from the delivery times
        assert src.info()["nominal_fps"] == pytest.approx(25.0)


def test_video_file_loop_and_missing_file(video: Path, tmp_path: Path):
    with VideoFileSource(video, realtime=False, loop=True) as src:
        frames = [src.read() for _ in range(45)]
    assert [level(f.image) for f in frames[18:23]] == [18, 19, 0, 1, 2]
    assert frames[-1].t > frames[20].t  # time keeps increasing over the loop
    with pytest.raises(SourceError, match="not found"):
        VideoFileSource(tmp_path / "nope.mp4").open()


# -- photo folders ----------------------------------------------------------------------------------
@pytest.fixture
def photos(tmp_path: Path) -> Path:
    d = tmp_path / "photos"
    d.mkdir()
    for name, n in [("img10.png", 3), ("img2.png", 2), ("img1.png", 1)]:
        cv2.imwrite(str(d / name), numbered(n))
    (d / "notes.txt").write_text("not a photo")
    return d


def test_folder_replays_photos_in_natural_order_with_motion_between(photos: Path):
    src = FolderSource(photos, hold_s=1.0, transition_s=0.4, fps=10)
    with src:
        frames = list(src)
        starts = src.photo_start_frames()
        assert [p.name for p in src.files] == ["img1.png", "img2.png", "img10.png"]
        assert src.hold_frames == 10 and src.transition_frames == 4
        assert len(frames) == 3 * 10 + 2 * 4
        assert starts == [0, 14, 28]
        for k, s in enumerate(starts):
            still = frames[s : s + 10]
            assert all(level(f.image) == k + 1 for f in still)
            assert all(np.array_equal(f.image, still[0].image) for f in still)
            assert all(src.photo_at(f.index) == k for f in still)
        transition = frames[10:14]
        assert all(src.photo_at(f.index) is None for f in transition)
        # Every transition frame differs a lot from its neighbours: a settle detector sees motion.
        for a, b in zip(frames[9:15], frames[10:15]):
            assert np.abs(a.image.astype(int) - b.image.astype(int)).mean() > 2
    assert frames[-1].t == pytest.approx(37 / 10)


def test_folder_noise_loop_and_sizes(tmp_path: Path, photos: Path):
    cv2.imwrite(str(photos / "img11.png"), np.full((60, 200, 3), 40, np.uint8))  # other size → fitted
    with FolderSource(photos, hold_s=0.5, transition_s=0.0, fps=10, noise=2.0, loop=True) as src:
        frames = [src.read() for _ in range(60)]
    assert {f.image.shape for f in frames} == {(120, 160, 3)}
    assert not np.array_equal(frames[1].image, frames[2].image)  # noise on still frames
    assert level(frames[1].image) == 1
    # One pass = 4 photos × 5 still frames + 3 one-frame cuts = 23 frames; then the replay loops,
    # with a cut from the last photo back to the first.
    assert src.photo_at(22) == 3 and src.photo_at(23) is None and src.photo_at(24) == 0
    assert level(frames[24].image) == 1 and level(frames[22].image) == 4


def test_a_folder_of_frames_plays_each_image_once_in_natural_order(photos: Path, tmp_path: Path):
    """The frames of a video saved as images: one frame per image, ``t`` = index / fps, ``f9`` before ``f10``; an
    unreadable frame is skipped (its neighbours keep their times); an empty or missing folder is refused on open."""
    for i in range(12):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), numbered(i))
    (tmp_path / "f5.png").write_bytes(b"broken")
    (tmp_path / "f0.png").write_bytes(b"broken too")  # even the first
    (tmp_path / "._f1.png").write_bytes(b"a macOS resource fork")
    with FrameFolderSource(tmp_path, fps=10) as src:
        got = [(level(f.image), round(f.t, 3)) for f in src]
    assert got == [(level(numbered(i)), i / 10) for i in range(12) if i not in (0, 5)]
    assert src.skipped == ["f0.png", "f5.png"]
    for bad in (tmp_path / "missing", photos / "empty"):
        (photos / "empty").mkdir(exist_ok=True)
        with pytest.raises(SourceError):
            FrameFolderSource(bad).open()
    with pytest.raises(ValueError):
        FrameFolderSource(tmp_path, fps=0)


def test_folder_errors(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="no photos"):
        FolderSource(empty).open()
    with pytest.raises(SourceError, match="not found"):
        FolderSource(tmp_path / "missing").open()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.jpg").write_bytes(b"this is not a jpeg")
    with pytest.raises(SourceError, match="a.jpg"):
        FolderSource(bad).open()


# -- newest-frame grabbing --------------------------------------------------------------------------
class FakeCapture:
    """A cv2.VideoCapture stand-in producing numbered frames every ``period`` seconds."""

    def __init__(self, period: float = 0.002, fail_after: int | None = None, opened: bool = True) -> None:
        self.period, self.fail_after, self.opened = period, fail_after, opened
        self.n = 0
        self.released = False

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return self.opened

    def set(self, prop: int, value: float) -> bool:
        return True

    def read(self):
        time.sleep(self.period)
        if self.fail_after is not None and self.n >= self.fail_after:
            return False, None
        self.n += 1
        img = np.zeros((8, 8, 3), np.uint8)
        img[0, 0, 0] = self.n % 256
        img[0, 0, 1] = self.n // 256
        return True, img

    def release(self) -> None:
        self.released = True


def counter(frame: Frame) -> int:
    return int(frame.image[0, 0, 0]) + 256 * int(frame.image[0, 0, 1])


def test_opencv_source_always_delivers_the_newest_frame():
    cap = FakeCapture(period=0.002)
    with OpenCVSource(0, capture_factory=lambda target: cap) as src:
        a = counter(src.read())
        for _ in range(1000):  # the consumer is slow: 30 frames are captured meanwhile (counted, not timed)
            if cap.n >= a + 30:
                break
            time.sleep(0.01)
        b = counter(src.read())
        c = counter(src.read())
    assert b - a >= 30, "a stale buffered frame was delivered"
    assert c > b  # never the same frame twice
    assert cap.released


def test_opencv_source_failures_raise_source_error():
    with pytest.raises(SourceError, match="cannot open camera 3"):
        OpenCVSource(3, capture_factory=lambda t: FakeCapture(opened=False)).open()
    src = OpenCVSource("rtsp://user:secret@cam/stream", capture_factory=lambda t: FakeCapture(period=0.001, fail_after=2),
                       read_timeout=2.0)
    with src:
        src.read()
        with pytest.raises(SourceError) as err:
            for _ in range(5):
                src.read()
    assert "secret" not in str(err.value)


def test_picamera_source_explains_when_picamera2_is_missing():
    try:
        import picamera2  # noqa: F401
    except ImportError:
        with pytest.raises(SourceError, match="picamera2"):
            PicameraSource().open()
    else:  # pragma: no cover - on a Pi
        pytest.skip("picamera2 is installed: this machine is a Pi")


# -- reconnection -----------------------------------------------------------------------------------
class FlakySource(OpenCVSource):
    """Fails to open ``fail_opens`` times (shared counter), then delivers ``frames_per_life`` frames and drops."""

    plan = {"opens": 0}

    def __init__(self, fail_opens: int, frames_per_life: int | None) -> None:
        super().__init__(0, capture_factory=lambda t: FakeCapture(period=0.0005, fail_after=frames_per_life))
        self.fail_opens = fail_opens

    def _open(self) -> None:
        FlakySource.plan["opens"] += 1
        if FlakySource.plan["opens"] <= self.fail_opens:
            raise SourceError("camera unplugged")
        super()._open()


def test_reconnect_with_exponential_backoff_then_recover():
    FlakySource.plan["opens"] = 0
    waits: list[float] = []
    statuses = []

    def fake_sleep(s: float) -> None:
        waits.append(s)
        statuses.append(src.status)

    src = ReconnectingSource(lambda: FlakySource(fail_opens=4, frames_per_life=None), initial_delay=0.5,
                             factor=2.0, max_delay=3.0, sleep=fake_sleep)
    with src:
        frame = src.read()
        assert frame.image.shape == (8, 8, 3)
        assert src.delays == [0.5, 1.0, 2.0, 3.0]  # doubled, capped at max_delay
        assert waits == pytest.approx(src.delays, abs=0.05)
        assert [s.state for s in statuses] == ["reconnecting"] * 4
        assert statuses[-1].attempts == 4 and "unplugged" in statuses[-1].message
        assert src.status.state == "ok" and src.status.attempts == 0


def test_reconnect_after_a_stream_drops_mid_way():
    FlakySource.plan["opens"] = 0
    waits: list[float] = []
    src = ReconnectingSource(lambda: FlakySource(fail_opens=0, frames_per_life=5), sleep=waits.append)
    with src:
        frames = [src.read() for _ in range(12)]
    assert len(frames) == 12
    assert [f.index for f in frames] == list(range(12))
    assert FlakySource.plan["opens"] >= 3  # the stream dropped twice and was reopened
    assert src.delays and all(d == 0.5 for d in src.delays)  # success resets the backoff
    assert waits == pytest.approx(src.delays, abs=0.05)


def test_reconnect_gives_up_after_max_attempts():
    FlakySource.plan["opens"] = 0
    src = ReconnectingSource(lambda: FlakySource(fail_opens=100, frames_per_life=None), max_attempts=3,
                             sleep=lambda s: None)
    with src:
        with pytest.raises(SourceError, match="gave up after 3"):
            src.read()
    assert src.status.state == "failed"
    assert "unplugged" in src.status.message


def test_reconnecting_read_with_timeout_reports_and_keeps_the_backoff_schedule():
    FlakySource.plan["opens"] = 0
    clock = FakeClock()  # the backoff waits pass on a fake clock: the schedule is exact on any machine
    src = ReconnectingSource(lambda: FlakySource(fail_opens=3, frames_per_life=None), initial_delay=0.2,
                             factor=2.0, max_delay=5.0, sleep=clock.sleep, clock=clock.monotonic)
    errors = []
    t0 = clock.now
    with src:
        while True:
            try:
                src.read(timeout=0.1)
                break
            except SourceError as exc:
                errors.append(str(exc))
                assert src.status.state in ("reconnecting", "connecting")  # waiting, or the next attempt runs
    assert src.delays == [0.2, 0.4, 0.8]  # the schedule went on across the timed-out reads
    assert clock.now - t0 == pytest.approx(0.2 + 0.4 + 0.8)  # and no wait was cut short or added
    assert len(errors) >= 10 and all("camera unplugged" in e for e in errors)  # one per 0.1 s read timeout
    assert src.status.state == "ok"


def test_reconnecting_close_interrupts_a_wait():
    FlakySource.plan["opens"] = 0
    src = ReconnectingSource(lambda: FlakySource(fail_opens=100, frames_per_life=None), initial_delay=30.0)
    src.open()
    errors = []

    def reader():
        try:
            src.read()
        except SourceError as exc:
            errors.append(exc)

    th = threading.Thread(target=reader)
    th.start()
    time.sleep(0.2)
    src.close()
    th.join(15.0)  # half the 30 s backoff: a read that close did not interrupt would still be waiting
    assert not th.is_alive()
    assert errors and "closed" in str(errors[0])


# -- parsing ----------------------------------------------------------------------------------------
def test_open_source_parses_specs(video: Path, photos: Path):
    cam = open_source("0")
    assert isinstance(cam, ReconnectingSource) and isinstance(cam._factory(), OpenCVSource)
    assert cam._factory().target == 0
    url = open_source("rtsp://10.0.0.2/live", reconnect=False)
    assert isinstance(url, OpenCVSource) and url.target == "rtsp://10.0.0.2/live"
    assert isinstance(open_source("http://cam.local/mjpg", reconnect=False), OpenCVSource)
    pi = open_source("picamera", reconnect=False, width=1920, height=1080, fps=25)
    assert isinstance(pi, PicameraSource) and pi.size == (1920, 1080) and pi.requested_fps == 25
    dev = open_source("/dev/video2", reconnect=False, width=640, height=480)
    assert isinstance(dev, OpenCVSource) and dev.target == "/dev/video2" and (dev.width, dev.height) == (640, 480)
    assert isinstance(open_source(str(video), realtime=False), VideoFileSource)
    # cli.md: `run` takes "a folder of frames" — a video saved as images; photos of separate throws when asked
    frames = open_source(str(photos), realtime=False)
    assert isinstance(frames, FrameFolderSource) and not frames.realtime and frames.frame_rate == 30.0
    assert open_source(str(photos), fps=12).frame_rate == 12
    folder = open_source(str(photos), realtime=False, photos=True)
    assert isinstance(folder, FolderSource) and not folder.realtime
    virt = open_source("virtual:3", realtime=False, width=640, height=360, fps=15)
    assert isinstance(virt, VirtualTableSource) and virt.n_dice == 3
    assert (virt.width, virt.height, virt.frame_rate) == (640, 360, 15)
    one = open_source(str(next(photos.glob("*.png"))), realtime=False)
    assert isinstance(one, FolderSource) and len(one._list_files()) == 1
    with pytest.raises(SourceError, match="unknown source"):
        open_source("/no/such/thing.mp4")
    with pytest.raises(SourceError):
        open_source("virtual:many")


# -- virtual table ----------------------------------------------------------------------------------
def test_virtual_table_throws_tumble_then_rest_with_truth():
    src = VirtualTableSource(n_dice=4, size=(640, 360), fps=20, realtime=False, tumble_s=0.5, seed=3,
                             initial_throw=False)
    with src:
        blank = [src.read() for _ in range(5)]
        assert src.last_throw is None
        src.throw(faces=[1, 5, 5, 2])
        frames = [src.read() for _ in range(30)]
        src.throw(n_dice=2)
        more = [src.read() for _ in range(30)]
    assert all(np.array_equal(blank[0].image, f.image) for f in blank)
    first, second = src.throws
    assert first.faces == [1, 2, 5, 5] and len(second.dice) == 2
    rest = first.first_rest_index
    assert rest is not None and rest - frames[0].index == 10  # tumble_s * fps
    tumble = frames[: rest - frames[0].index]
    still = frames[rest - frames[0].index :]
    assert all(np.array_equal(still[0].image, f.image) for f in still)
    assert all(not np.array_equal(a.image, b.image) for a, b in zip(tumble, tumble[1:]))
    assert first.boxes.shape == (4, 4)
    x1, y1, x2, y2 = first.boxes.T
    assert ((x2 - x1) > 10).all() and ((y2 - y1) > 10).all()
    assert second.first_rest_index is not None and second.first_rest_index > more[0].index
    with pytest.raises(ValueError):
        src.throw(faces=[7])


def test_virtual_table_auto_throws_and_end():
    src = VirtualTableSource(n_dice=5, size=(320, 180), fps=10, realtime=False, tumble_s=0.5, auto_every_s=1.0,
                             seed=0, max_frames=50)
    with src:
        frames = list(src)
    assert len(frames) == 50
    # A throw at 0 s rests at 0.5 s; the next starts 1 s later (1.5 s) ... → throws at 0, 1.5, 3.0, 4.5 s.
    assert [round(t.t_start, 2) for t in src.throws] == [0.0, 1.5, 3.0, 4.5]


def test_parse_source_spec_is_the_one_grammar(video: Path, photos: Path):
    """open_source and the config's [source] spec check read the spec through parse_source_spec."""
    from kosti.config import SourceSettings
    from kosti.vision.source_spec import SourceSpec, parse_source_spec

    assert parse_source_spec(" PiCamera2 ") == SourceSpec("picamera")
    assert parse_source_spec("3") == SourceSpec("device", 3)
    assert parse_source_spec("/dev/video2") == SourceSpec("device", "/dev/video2")
    assert parse_source_spec("RTSP://cam/live") == SourceSpec("url", "RTSP://cam/live")
    assert parse_source_spec("virtual:4") == SourceSpec("virtual", None, 4)
    assert parse_source_spec("virtual") == SourceSpec("virtual")
    assert parse_source_spec(str(photos)) == SourceSpec("folder", photos)
    one = next(photos.glob("*.png"))
    assert parse_source_spec(str(one)) == SourceSpec("photo", one)
    assert parse_source_spec(str(video)) == SourceSpec("video", video)
    assert parse_source_spec("0").live and not parse_source_spec("virtual").live
    for bad in ("rtsp://", "virtual:", "virtual:-1", "/no/such/dir"):
        with pytest.raises(SourceError):
            parse_source_spec(bad)
        with pytest.raises(ValueError):
            SourceSettings(spec=bad)
    assert SourceSettings(spec=str(photos)).kind == "folder" and SourceSettings(spec="virtual:2").kind == "virtual"


def test_unknown_source_message_names_the_spec_once(tmp_path: Path):
    """One line that names the spec once ("unknown source 'X': …", never "unknown source 'X': unknown source 'X'")."""
    from kosti.vision.source_spec import parse_source_spec

    spec = str(tmp_path / "no-such.mp4")
    for call in (parse_source_spec, open_source):
        with pytest.raises(SourceError) as info:
            call(spec)
        msg = str(info.value)
        assert msg.startswith(f"unknown source {spec!r}: no such file or folder") and "\n" not in msg
        assert msg.count(spec) == 1 and msg.count("unknown source") == 1
