"""The authoring graph: one LangGraph graph per persona run (`build_graph`), its typed state (`state`), the
context every node is given (`context`), the nodes (`nodes`), the conditional routes (`routes`) and how its
checkpoints are read back (`checkpoints`). A run is invoked through `authoring.run`."""

from .checkpoints import CheckpointFormatError, serializer
from .context import Drivers, Env, RunContext
from .graph import build_graph, node_names
from .state import PipelineState

__all__ = [
    "CheckpointFormatError",
    "Drivers",
    "Env",
    "PipelineState",
    "RunContext",
    "build_graph",
    "node_names",
    "serializer",
]
