"""planfuzz's own modules import one another without a circle: not at load time, and not through an import inside a
function either (one that only breaks a circle at run time), so data flows one way and every module can be read alone."""
import ast
from pathlib import Path

import networkx as nx

from fuzz.gen.features import MODULES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("planner", "oracle", "fuzz")


def module_name(path: Path) -> str:
  parts = path.relative_to(ROOT).with_suffix("").parts
  return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, me: str, modules: set[str]) -> set[str]:
  """Project modules a module imports anywhere in its code (a name imported from a package counts as its module
  when it is one); imports under `if TYPE_CHECKING:` are for type checkers only and never run."""
  skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
          for n in ast.walk(node)}
  out: set[str] = set()
  for node in ast.walk(tree):
    if id(node) in skip: continue
    if isinstance(node, ast.Import): out |= {a.name for a in node.names}
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
      out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
  return {m for m in out if m in modules and m != me and not me.startswith(m + ".")}


def import_graph() -> nx.DiGraph:
  files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "known" not in p.parts or p.name in ("__init__.py", "bugs.py")]
  modules = {module_name(p): p for p in files}
  graph = nx.DiGraph()
  for name, path in modules.items():
    graph.add_node(name)
    graph.add_edges_from((name, m) for m in imported(ast.parse(path.read_text()), name, set(modules)))
  graph.add_edges_from(("fuzz.gen.features", f"fuzz.gen.features.{m}") for m in MODULES)  # the registry imports them by name
  return graph


def test_the_import_graph_has_no_circle() -> None:
  graph = import_graph()
  assert graph.number_of_nodes() > 60 and graph.has_edge("fuzz.campaign.workers", "fuzz.campaign.explore")
  assert graph.has_edge("fuzz.gen.features", "fuzz.gen.features.kv_cache")
  cycles = list(nx.simple_cycles(graph))
  assert not cycles, "\n".join(" -> ".join([*c, c[0]]) for c in cycles[:10])
