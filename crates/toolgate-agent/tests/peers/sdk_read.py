"""Reads the fake model server's answers with the official OpenAI and Anthropic Python SDKs.

If the SDKs' own stream accumulators assemble the same tool calls and text that the script
scripted, the fake server speaks the real wire format, and the tests that use it test
toolgate's providers against the real format. Usage: sdk_read.py BASE (http://127.0.0.1:PORT).
Prints one JSON object.
"""

import json
import sys

import anthropic
import openai

base = sys.argv[1]
schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
msgs = [{"role": "user", "content": "hi"}]
out = {}

o = openai.OpenAI(api_key="k", base_url=base + "/v1", max_retries=0)
chat_tools = [{"type": "function", "function": {"name": "echo", "parameters": schema}}]


def chat_calls(message):
    return [[c.id, c.function.name, c.function.arguments] for c in message.tool_calls or []]


r = o.chat.completions.create(model="m", messages=msgs, tools=chat_tools)
out["chat"] = [r.choices[0].finish_reason, chat_calls(r.choices[0].message)]
with o.chat.completions.stream(model="m", messages=msgs, tools=chat_tools) as s:
    final = s.get_final_completion()
out["chat_stream"] = [final.choices[0].finish_reason, chat_calls(final.choices[0].message)]
with o.chat.completions.stream(model="m", messages=msgs) as s:
    final = s.get_final_completion()
out["chat_stream_text"] = [final.choices[0].finish_reason, final.choices[0].message.content]

resp_tools = [{"type": "function", "name": "echo", "parameters": schema, "strict": False}]


def items(response):
    return [
        [i.type, getattr(i, "call_id", None), getattr(i, "name", None), getattr(i, "arguments", None)]
        for i in response.output
    ]


r = o.responses.create(model="m", input="hi", tools=resp_tools)
out["responses"] = [r.status, items(r)]
with o.responses.stream(model="m", input="hi", tools=resp_tools) as s:
    final = s.get_final_response()
out["responses_stream"] = [final.status, items(final)]
with o.responses.stream(model="m", input="hi") as s:
    final = s.get_final_response()
out["responses_stream_text"] = [final.status, final.output_text]

a = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0)
anth_tools = [{"name": "echo", "input_schema": schema}]


def blocks(message):
    got = []
    for b in message.content:
        if b.type == "tool_use":
            got.append([b.type, b.id, b.name, b.input])
        elif b.type == "text":
            got.append([b.type, b.text])
        elif b.type == "thinking":
            got.append([b.type, b.thinking, b.signature])
        else:
            got.append([b.type])
    return got


m = a.messages.create(model="m", max_tokens=64, messages=msgs, tools=anth_tools)
out["anthropic"] = [m.stop_reason, blocks(m)]
with a.messages.stream(model="m", max_tokens=64, messages=msgs, tools=anth_tools) as s:
    final = s.get_final_message()
out["anthropic_stream"] = [final.stop_reason, blocks(final)]
with a.messages.stream(model="m", max_tokens=64, messages=msgs) as s:
    final = s.get_final_message()
out["anthropic_stream_text"] = [final.stop_reason, blocks(final)]

print(json.dumps(out))
