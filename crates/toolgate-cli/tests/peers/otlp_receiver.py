"""A minimal OTLP/HTTP collector for the telemetry tests: what toolgate exports, decoded with
the official protobuf definitions (opentelemetry-proto), one JSON line per span.

Usage: otlp_receiver.py SPANS.jsonl

Listens on 127.0.0.1 on a free port and prints the port as its first line of stdout.
- POST /v1/traces: an ExportTraceServiceRequest (gzip when Content-Encoding says so); each
  span is appended to SPANS.jsonl as {"name", "kind", "trace_id", "span_id",
  "parent_span_id" (hex, "" for a root), "attributes": {key: value}, "events": [name…],
  "status": code, "resource": {key: value}}. Answers an empty ExportTraceServiceResponse.
- POST /v1/metrics: decoded (so a malformed body is a 400) and answered with an empty
  ExportMetricsServiceResponse.
Anything else is 404. Runs until killed.
"""

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

OUT = sys.argv[1]
LOCK = threading.Lock()


def value(v):
    """An OTLP AnyValue as plain JSON."""
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def spans(request):
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "name": s.name,
                    "kind": s.kind,
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "attributes": attributes(s.attributes),
                    "events": [e.name for e in s.events],
                    "status": s.status.code,
                    "resource": resource,
                }


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet: the test reads the file, not stderr
        pass

    def body(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    def answer(self, status, payload=b""):
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self):
        try:
            if self.path == "/v1/traces":
                request = ExportTraceServiceRequest()
                request.ParseFromString(self.body())
                lines = [json.dumps(s) + "\n" for s in spans(request)]
                with LOCK, open(OUT, "a") as f:
                    f.writelines(lines)
                self.answer(200, ExportTraceServiceResponse().SerializeToString())
            elif self.path == "/v1/metrics":
                ExportMetricsServiceRequest().ParseFromString(self.body())
                self.answer(200, ExportMetricsServiceResponse().SerializeToString())
            else:
                self.answer(404)
        except Exception as e:  # noqa: BLE001 - a bad body is the sender's fault: 400
            sys.stderr.write(f"otlp_receiver: {self.path}: {e!r}\n")
            self.answer(400)


def main():
    open(OUT, "a").close()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
