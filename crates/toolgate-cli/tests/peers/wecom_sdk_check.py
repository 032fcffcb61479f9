"""wechatpy checks the WeCom fake (fake_wecom.py): its WeCom client, pointed at the fake, gets a
token, sends text and is refused as WeCom refuses; a callback the fake sends verifies and
decrypts with wechatpy's WeCom crypto and parses with its WeCom message parser; a forged one
does not verify. Prints one JSON line {"ok": bool, "passed": N, "failed": [...]} and exits 1 on
any failure.
"""

import json
import os
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wechatpy.enterprise import WeChatClient, parse_message
from wechatpy.enterprise.crypto import WeChatCrypto
from wechatpy.exceptions import InvalidSignatureException, WeChatClientException

HERE = os.path.dirname(os.path.abspath(__file__))
CORP, SECRET, AGENT, TOKEN = "ww0123456789abcdef", "app-secret-for-tests", 1000002, "callbackToken"
AES = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
CHECKS = []


def check(name, ok, detail=""):
    CHECKS.append({"name": name, "ok": bool(ok), **({"detail": str(detail)[:400]} if not ok else {})})


def http(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read())


class Receiver:
    def __init__(self):
        self.got = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.got.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Length", "7")
                self.end_headers()
                self.wfile.write(b"success")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/cb"


def main():
    fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_wecom.py"), "--corp-id", CORP, "--secret", SECRET,
                             "--agent-id", str(AGENT), "--token", TOKEN, "--aes-key", AES, "--user", "alice"],
                            stdout=subprocess.PIPE)
    try:
        port = json.loads(fake.stdout.readline())["port"]
        base = f"http://127.0.0.1:{port}"

        class Client(WeChatClient):
            # wechatpy's WeCom client with both its bases on the fake: the API's, and the
            # token URL its fetch_access_token hardcodes.
            API_BASE_URL = f"{base}/cgi-bin/"

            def fetch_access_token(self):
                return self._fetch_access_token(url=f"{base}/cgi-bin/gettoken",
                                                params={"corpid": self.corp_id, "corpsecret": self.secret})

        client = Client(CORP, SECRET)
        sent = client.message.send_text(AGENT, "alice", "hello from wechatpy")
        check("wechatpy send_text", sent["errcode"] == 0 and sent["msgid"], sent)
        msgs = http("GET", f"{base}/_test/messages")
        check("the fake keeps the message", msgs and msgs[-1]["content"] == "hello from wechatpy", msgs)
        try:
            client.message.send_text(AGENT, "alice", "长" * 700)
            check("an over-long text is refused", False, "accepted")
        except WeChatClientException as e:
            check("an over-long text is refused (45002)", e.errcode == 45002, e)
        bad = Client(CORP, "wrong")
        try:
            bad.message.send_text(AGENT, "alice", "x")
            check("a wrong secret is refused", False, "accepted")
        except WeChatClientException as e:
            check("a wrong secret is refused (40001)", e.errcode == 40001, e)
        http("POST", f"{base}/_test/expire", {})
        again = client.message.send_text(AGENT, "alice", "after expiry")
        check("wechatpy fetches a new token after 42001", again["errcode"] == 0, again)

        crypto = WeChatCrypto(TOKEN, AES, CORP)
        recv = Receiver()
        out = http("POST", f"{base}/_test/say", {"url": recv.url, "user": "alice", "text": "weather?"})
        check("the callback is delivered", out["status"] == 200 and recv.got, out)
        if recv.got:
            path, body = recv.got[-1]
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query))
            xml = crypto.decrypt_message(body.decode(), q["msg_signature"], q["timestamp"], q["nonce"])
            msg = parse_message(xml)
            check("the callback decrypts and parses with wechatpy", msg.type == "text" and msg.content == "weather?"
                  and msg.source == "alice" and msg.agent == AGENT, xml)
        out = http("POST", f"{base}/_test/forged", {"url": recv.url, "user": "alice", "text": "x"})
        path, body = recv.got[-1]
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query))
        try:
            crypto.decrypt_message(body.decode(), q["msg_signature"], q["timestamp"], q["nonce"])
            check("a forged callback does not verify", False, "verified")
        except InvalidSignatureException:
            check("a forged callback does not verify", True)
        out = http("POST", f"{base}/_test/click", {"url": recv.url, "user": "alice", "task_id": "t1", "key": "k1"})
        path, body = recv.got[-1]
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query))
        xml = crypto.decrypt_message(body.decode(), q["msg_signature"], q["timestamp"], q["nonce"])
        check("a card press is a template_card_event", "template_card_event" in xml and "<TaskId><![CDATA[t1]]>" in xml, xml)
    finally:
        fake.kill()
    failed = [c for c in CHECKS if not c["ok"]]
    print(json.dumps({"ok": not failed, "passed": len(CHECKS) - len(failed), "failed": failed}))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
