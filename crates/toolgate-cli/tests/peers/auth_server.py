"""A test OAuth 2.1 authorization server with its own keys and JWKS, for toolgate's
resource-server tests (issue 16). Standard library HTTP server; PyJWT and cryptography (both
installed with the MCP Python SDK) sign the tokens.

Serves:
  GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (issuer = http://127.0.0.1:PORT)
  GET  /jwks                                      the published keys (counts fetches)
  POST /token                                     client_credentials (client_secret_basic or _post),
                                                  RFC 8707 `resource` → `aud`
Test controls:
  POST /admin/mint    {"claims": {...}, "alg": "RS256"|"ES256"|"EdDSA"|"none"|"HS256-with-public-key",
                       "kid": "rsa-1", "key": "rsa-1"}  → {"token": …}; unset claims get
                       iss, iat, exp (+300 s), sub
  POST /admin/rotate  publishes the key `rsa-2` (a rotation)
  POST /admin/retire  {"kid": "rsa-1"}: stops publishing that key
  POST /admin/jwks_mode {"mode": "normal" | "down" | "huge"}: down answers /jwks with HTTP 500;
                      huge streams a 256 MiB body, chunked, without Content-Length
  GET  /admin/stats   {"jwks_fetches": n, "token_requests": n, "huge_sent": bytes the last
                       huge body got out before the reader hung up, "huge_done": n}

Prints `listening on PORT` once ready. Usage: auth_server.py [--client-id ID --client-secret S]
"""

import base64
import hashlib
import hmac
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

CLIENT_ID = "test-client"
CLIENT_SECRET = "test-secret"
for i, arg in enumerate(sys.argv):
    if arg == "--client-id":
        CLIENT_ID = sys.argv[i + 1]
    if arg == "--client-secret":
        CLIENT_SECRET = sys.argv[i + 1]

KEYS = {
    "rsa-1": ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
    "rsa-2": ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
    "ec-1": ("ES256", ec.generate_private_key(ec.SECP256R1())),
    "ed-1": ("EdDSA", ed25519.Ed25519PrivateKey.generate()),
}
PUBLISHED = {"rsa-1", "ec-1", "ed-1"}
STATS = {"jwks_fetches": 0, "token_requests": 0, "huge_sent": 0, "huge_done": 0}
MODE = {"jwks": "normal"}
HUGE = 256 << 20
LOCK = threading.Lock()
ISSUER = ""


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk(kid: str) -> dict:
    alg, key = KEYS[kid]
    public = key.public_key()
    if alg == "RS256":
        out = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public))
    elif alg == "ES256":
        out = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public))
    else:
        out = json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(public))
    out.update({"kid": kid, "alg": alg, "use": "sig"})
    return out


def unsigned(header: dict, claims: dict) -> str:
    return b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())


def mint(claims: dict, alg: str = "RS256", kid: str = "rsa-1", key: str | None = None) -> str:
    now = int(time.time())
    full = {"iss": ISSUER, "iat": now, "exp": now + 300, "sub": "user-1"}
    full.update(claims)
    full = {k: v for k, v in full.items() if v is not None}
    if alg == "none":
        return unsigned({"alg": "none", "typ": "JWT", "kid": kid}, full) + "."
    if alg == "HS256-with-public-key":
        # The classic confusion: the issuer's PUBLIC key used as an HMAC secret.
        pem = KEYS[key or "rsa-1"][1].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        text = unsigned({"alg": "HS256", "typ": "JWT", "kid": kid}, full)
        return text + "." + b64(hmac.new(pem, text.encode(), hashlib.sha256).digest())
    return jwt.encode(full, KEYS[key or kid][1], algorithm=alg, headers={"kid": kid})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, status: int, body: dict):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_huge(self):
        """A JSON document of HUGE bytes, chunked, no Content-Length; counts what got out."""
        self.protocol_version = "HTTP/1.1"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        piece = b'{"keys": [], "pad": "' + b"x" * (64 * 1024 - 21)
        sent = 0
        try:
            while sent < HUGE:
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                sent += len(piece)
                piece = b"x" * (64 * 1024)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self.close_connection = True
            with LOCK:
                STATS["huge_sent"] = sent
                STATS["huge_done"] += 1

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def do_GET(self):
        if self.path == "/.well-known/oauth-authorization-server":
            return self.send_json(200, {
                "issuer": ISSUER,
                "jwks_uri": ISSUER + "/jwks",
                "token_endpoint": ISSUER + "/token",
                "authorization_endpoint": ISSUER + "/authorize",
                "response_types_supported": ["code"],
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "scopes_supported": ["tools", "admin"],
                "code_challenge_methods_supported": ["S256"],
            })
        if self.path == "/jwks":
            with LOCK:
                STATS["jwks_fetches"] += 1
                keys = [jwk(k) for k in sorted(PUBLISHED)]
                mode = MODE["jwks"]
            if mode == "down":
                return self.send_json(500, {"error": "down"})
            if mode == "huge":
                return self.send_huge()
            return self.send_json(200, {"keys": keys})
        if self.path == "/admin/stats":
            with LOCK:
                return self.send_json(200, dict(STATS))
        self.send_json(404, {"error": "not_found"})

    def do_POST(self):
        if self.path == "/admin/mint":
            req = json.loads(self.body() or b"{}")
            token = mint(req.get("claims", {}), req.get("alg", "RS256"), req.get("kid", "rsa-1"), req.get("key"))
            return self.send_json(200, {"token": token})
        if self.path == "/admin/rotate":
            with LOCK:
                PUBLISHED.add("rsa-2")
            return self.send_json(200, {"published": sorted(PUBLISHED)})
        if self.path == "/admin/retire":
            req = json.loads(self.body() or b"{}")
            with LOCK:
                PUBLISHED.discard(req["kid"])
            return self.send_json(200, {"published": sorted(PUBLISHED)})
        if self.path == "/admin/jwks_mode":
            req = json.loads(self.body() or b"{}")
            with LOCK:
                MODE["jwks"] = req["mode"]
            return self.send_json(200, {})
        if self.path == "/token":
            with LOCK:
                STATS["token_requests"] += 1
            form = dict(urllib.parse.parse_qsl(self.body().decode()))
            cid, secret = form.get("client_id"), form.get("client_secret")
            auth = self.headers.get("authorization", "")
            if auth.startswith("Basic "):
                cid, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
                cid, secret = urllib.parse.unquote(cid), urllib.parse.unquote(secret)
            if cid != CLIENT_ID or secret != CLIENT_SECRET:
                return self.send_json(401, {"error": "invalid_client"})
            if form.get("grant_type") != "client_credentials":
                return self.send_json(400, {"error": "unsupported_grant_type"})
            scope = form.get("scope", "tools")
            claims = {"sub": cid, "client_id": cid, "scope": scope, "groups": ["agents"]}
            if form.get("resource"):
                claims["aud"] = form["resource"]
            token = mint(claims)
            return self.send_json(200, {"access_token": token, "token_type": "Bearer",
                                        "expires_in": 300, "scope": scope})
        self.send_json(404, {"error": "not_found"})


def main():
    global ISSUER
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ISSUER = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
