"""The adapter is the only door to tinygrad internals: an unsupported tinygrad fails at import with one clear error."""
import pytest

from planner import tg


def test_missing_internals_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setitem(tg._NEEDED, "tinygrad.engine.jit", ("JitError", "no_such_lowering"))
  monkeypatch.setitem(tg._NEEDED, "tinygrad.no_such_module", ("Thing",))
  with pytest.raises(tg.UnsupportedTinygrad) as err:
    tg._load()
  msg = str(err.value)
  assert tg.installed_version() in msg and "0.14.0" in msg
  assert "tinygrad.engine.jit.no_such_lowering" in msg and "tinygrad.no_such_module.Thing" in msg
  assert "JitError" not in msg.split("lacks:")[1]


def test_other_version_with_all_internals_warns(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(tg, "installed_version", lambda: "9.9.9")
  with pytest.warns(UserWarning, match="9.9.9"):
    found = tg._load()
  assert found["memory_plan_rewrite"] is tg.tinygrad_memory_plan


def test_installed_version_is_supported() -> None:
  assert tg.installed_version() in tg.SUPPORTED_VERSIONS
