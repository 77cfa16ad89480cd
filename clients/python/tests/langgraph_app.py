"""A LangGraph app run in its own process by test_langgraph_processes.py, with BatonSaver as its checkpointer.

python langgraph_app.py URL TOKEN THREAD ask       # runs until the graph asks a person, then exits
python langgraph_app.py URL TOKEN THREAD answer X  # resumes with the answer X, prints the final state
python langgraph_app.py URL TOKEN THREAD count N   # counts to N, one checkpoint a step, printing each step
python langgraph_app.py URL TOKEN THREAD resume    # continues the count from the thread's last checkpoint
"""

from __future__ import annotations

import json
import operator
import sys
import time
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from baton import Client
from baton.langgraph import BatonSaver


class Ask(TypedDict, total=False):
    question: str
    answer: str
    done: str


def ask_graph(saver: BatonSaver):  # type: ignore[no-untyped-def]
    def draft(state: Ask) -> Ask:
        return {"question": "Ship the release?"}

    def human(state: Ask) -> Ask:
        return {"answer": interrupt({"question": state["question"]})}

    def finish(state: Ask) -> Ask:
        return {"done": f"{state['question']} -> {state['answer']}"}

    builder = StateGraph(Ask)
    builder.add_node("draft", draft)
    builder.add_node("human", human)
    builder.add_node("finish", finish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "human")
    builder.add_edge("human", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=saver)


class Count(TypedDict, total=False):
    target: int
    n: int
    log: Annotated[list[int], operator.add]


def count_graph(saver: BatonSaver):  # type: ignore[no-untyped-def]
    def step(state: Count) -> Count:
        time.sleep(0.15)
        n = state.get("n", 0)
        print(f"step {n}", flush=True)
        return {"n": n + 1, "log": [n]}

    def more(state: Count) -> str:
        return "step" if state["n"] < state["target"] else END

    builder = StateGraph(Count)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", more)
    return builder.compile(checkpointer=saver)


def main() -> None:
    url, token, thread, mode = sys.argv[1:5]
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 1000}
    with Client(url, token=token) as client:
        saver = BatonSaver(client)
        if mode == "ask":
            result = ask_graph(saver).invoke({}, config, durability="sync")
            print(json.dumps({"interrupts": [i.value for i in result.get("__interrupt__", [])]}), flush=True)
        elif mode == "answer":
            result = ask_graph(saver).invoke(Command(resume=sys.argv[5]), config, durability="sync")
            print(json.dumps(result), flush=True)
        elif mode == "count":
            result = count_graph(saver).invoke({"target": int(sys.argv[5])}, config, durability="sync")
            print(json.dumps(result), flush=True)
        elif mode == "resume":
            result = count_graph(saver).invoke(None, config, durability="sync")
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
