"""Writes inspect_0_3_285_two_epochs_tool_errors.eval with inspect-ai itself (0.3.285) and its
mock model, offline: two samples in two epochs, a system message, a tool that fails (ToolError)
for one input, the `includes` scorer. Not needed by the suite or the site; run it in a virtualenv
of its own (`pip install inspect-ai`) to write the log again:

    python tests/trajectories/data/make_inspect_log.py /tmp/logs

The mock model hands its outputs to samples as they ask, and samples run concurrently, so which
sample gets which output (and so each sample's number of messages) is up to the run: the test
checks what holds whatever the order.
"""

import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import ToolError, tool


@tool
def divide():
    async def execute(x: int, y: int):
        """Divide x by y.

        Args:
            x: numerator
            y: denominator
        """
        if y == 0:
            raise ToolError("division by zero")
        return str(x // y)

    return execute


def used(output, n):
    # Fixed usage: without it Inspect counts tokens with tiktoken, which downloads its tables.
    output.usage = ModelUsage(input_tokens=40 + n, output_tokens=10, total_tokens=50 + n)
    return output


def outputs():
    for _ in range(4):  # 2 samples x 2 epochs
        yield used(ModelOutput.for_tool_call("mockllm/model", "divide", {"x": 8, "y": 0}), 0)
        yield used(ModelOutput.for_tool_call("mockllm/model", "divide", {"x": 8, "y": 2}), 20)
        yield used(ModelOutput.from_content("mockllm/model", "The answer is 4."), 40)


task = Task(
    dataset=[
        Sample(input="What is 8 / 2? Use divide.", target="4", id="div-1"),
        Sample(input="What is 8 / 0? Use divide.", target="undefined", id="div-2"),
    ],
    solver=[
        system_message("You divide numbers with the divide tool."),
        use_tools(divide()),
        generate(),
    ],
    scorer=includes(),
    epochs=2,
)

if __name__ == "__main__":
    model = get_model("mockllm/model", custom_outputs=outputs())
    eval(task, model=model, log_dir=sys.argv[1], log_format="eval", display="none")
