"""A local fake of the WeCom (企业微信) server API and of its callbacks, for the bots' tests.
The callbacks are signed and encrypted with wechatpy's own WeCom crypto, so what toolgate
accepts is what WeCom's scheme produces, and passive replies toolgate sends are decrypted with
it (wechatpy, pinned in scripts/test.sh, is the official-scheme implementation checked here).

Usage: fake_wecom.py --corp-id ww... --secret S --agent-id N --token T --aes-key K43
                     --user U [--user U ...]

Listens on 127.0.0.1 on a free port, prints one line {"port": N} once listening and runs until
killed.

API (as WeCom's, under /cgi-bin/): every answer is HTTP 200 JSON with errcode/errmsg.
  GET  gettoken?corpid&corpsecret        -> {access_token, expires_in: 7200}
                                            (40013 invalid corpid, 40001 invalid secret)
  POST message/send?access_token          text ({content} at most 2048 bytes, else 45002) or
                                          template_card (button_interaction: task_id unique,
                                          1-6 buttons with text and key) -> {msgid,
                                          response_code (cards)}; touser not a member ->
                                          invaliduser; agentid not this app's -> 301002
  POST message/update_template_card       {userids, agentid, response_code, button:
                                          {replace_name}}: each response code once
  POST message/recall                     {msgid}
  An expired or unknown access_token is 42001 / 40014, as WeCom answers.

Test control (JSON):
  GET  /_test/messages   [{msgid, touser, msgtype, content | template_card, recalled, updated}]
  GET  /_test/calls      {path: n}
  POST /_test/expire     {} -> {}: every token issued so far is expired
  POST /_test/say        {url, user, text, age?} -> {status, body, reply, msgid}: a user's
                         text message as an encrypted callback POSTed to url (reply: the
                         passive reply toolgate answered, decrypted with wechatpy, or null;
                         age: seconds to date its timestamp back, a replayed callback)
  POST /_test/click      {url, user, task_id, key} -> {status, body}: a press on a card's
                         button (template_card_event with a fresh ResponseCode)
  POST /_test/verify     {url} -> {status, body, echo}: the URL check (GET with echostr);
                         echo is what the body must be
  POST /_test/forged     {url, user, text} -> {status, body}: a callback signed with another
                         token
"""

import argparse
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import xmltodict
from wechatpy.enterprise.crypto import WeChatCrypto


class WeCom:
    def __init__(self, args):
        self.corp = args.corp_id
        self.secret = args.secret
        self.agent = int(args.agent_id)
        self.users = set(args.user)
        self.crypto = WeChatCrypto(args.token, args.aes_key, args.corp_id)
        self.other = WeChatCrypto("not-the-token", args.aes_key, args.corp_id)
        self.lock = threading.Lock()
        self.tokens = {}
        self.messages = []
        self.codes = {}
        self.tasks = set()
        self.calls = {}
        self.next_msg = 1000

    def err(self, code, msg):
        return {"errcode": code, "errmsg": msg}

    def token_ok(self, q):
        t = q.get("access_token")
        if t not in self.tokens:
            return self.err(40014, "invalid access_token")
        if self.tokens[t] < time.time():
            return self.err(42001, "access_token expired")
        return None

    def api(self, path, q, body):
        with self.lock:
            self.calls[path] = self.calls.get(path, 0) + 1
            if path == "gettoken":
                if q.get("corpid") != self.corp:
                    return self.err(40013, "invalid corpid")
                if q.get("corpsecret") != self.secret:
                    return self.err(40001, "invalid credential")
                t = secrets.token_urlsafe(32)
                self.tokens[t] = time.time() + 7200
                return {"errcode": 0, "errmsg": "ok", "access_token": t, "expires_in": 7200}
            bad = self.token_ok(q)
            if bad:
                return bad
            if path == "message/send":
                if body.get("agentid") not in (self.agent, str(self.agent)):
                    return self.err(301002, "not allow operate another agent with this accesstoken")
                users = [u for u in str(body.get("touser", "")).split("|") if u]
                unknown = [u for u in users if u not in self.users]
                kind = body.get("msgtype")
                rec = {"touser": body.get("touser"), "msgtype": kind, "recalled": False, "updated": None}
                out = {"errcode": 0, "errmsg": "ok"}
                if kind == "text":
                    content = (body.get("text") or {}).get("content")
                    if not content:
                        return self.err(41009, "missing content")
                    if len(content.encode("utf-8")) > 2048:
                        return self.err(45002, "content size out of limit")
                    rec["content"] = content
                elif kind == "template_card":
                    card = body.get("template_card") or {}
                    if card.get("card_type") != "button_interaction":
                        return self.err(40058, "card_type is invalid")
                    task = card.get("task_id")
                    if not task or task in self.tasks or len(task) > 128:
                        return self.err(40058, "task_id is invalid or used")
                    buttons = card.get("button_list") or []
                    if not 1 <= len(buttons) <= 6 or any(not b.get("key") or not b.get("text") for b in buttons):
                        return self.err(40058, "button_list is invalid")
                    if not (card.get("main_title") or {}).get("title"):
                        return self.err(40058, "main_title is required")
                    self.tasks.add(task)
                    rec["template_card"] = card
                    code = secrets.token_hex(8)
                    self.codes[code] = task
                    out["response_code"] = code
                else:
                    return self.err(40008, "invalid message type")
                if unknown:
                    out["invaliduser"] = "|".join(unknown)
                    if len(unknown) == len(users):
                        return out
                self.next_msg += 1
                rec["msgid"] = f"msg{self.next_msg}"
                self.messages.append(rec)
                out["msgid"] = rec["msgid"]
                return out
            if path == "message/update_template_card":
                code = body.get("response_code")
                task = self.codes.pop(code, None)
                if task is None:
                    return self.err(40078, "invalid response_code")
                for m in self.messages:
                    if (m.get("template_card") or {}).get("task_id") == task:
                        m["updated"] = body.get("button") or body.get("template_card")
                return {"errcode": 0, "errmsg": "ok"}
            if path == "message/recall":
                for m in self.messages:
                    if m.get("msgid") == body.get("msgid"):
                        m["recalled"] = True
                        return {"errcode": 0, "errmsg": "ok"}
                return self.err(40104, "invalid msgid")
            return self.err(60011, "no privilege to access/modify contact/party/agent")

    def callback(self, url, xml, crypto=None, age=0):
        crypto = crypto or self.crypto
        nonce = secrets.token_hex(5)
        ts = str(int(time.time()) - int(age))
        sealed = xmltodict.parse(crypto.encrypt_message(xml, nonce, ts))["xml"]
        body = (f"<xml><ToUserName><![CDATA[{self.corp}]]></ToUserName>"
                f"<AgentID><![CDATA[{self.agent}]]></AgentID>"
                f"<Encrypt><![CDATA[{sealed['Encrypt']}]]></Encrypt></xml>").encode()
        q = urllib.parse.urlencode({"msg_signature": sealed["MsgSignature"], "timestamp": ts, "nonce": nonce})
        status, text = send(f"{url}?{q}", body, "POST")
        reply = None
        if status == 200 and text.strip().startswith("<xml"):
            env = xmltodict.parse(text)["xml"]
            reply = self.crypto.decrypt_message(text, env["MsgSignature"], env["TimeStamp"], env["Nonce"])
        return {"status": status, "body": text, "reply": reply}

    def user_xml(self, user, text):
        msgid = str(secrets.randbelow(10**16))
        return (f"<xml><ToUserName><![CDATA[{self.corp}]]></ToUserName><FromUserName><![CDATA[{user}]]></FromUserName>"
                f"<CreateTime>{int(time.time())}</CreateTime><MsgType><![CDATA[text]]></MsgType>"
                f"<Content><![CDATA[{text}]]></Content><MsgId>{msgid}</MsgId><AgentID>{self.agent}</AgentID></xml>"), msgid


def send(url, data, method):
    req = urllib.request.Request(url, data=data if method == "POST" else None, method=method,
                                 headers={"Content-Type": "text/xml"} if method == "POST" else {})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except Exception as e:  # noqa: BLE001 - reported to the test
        return None, f"{type(e).__name__}: {e}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: WeCom = None

    def log_message(self, *a):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def route(self):
        u = urllib.parse.urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        f = self.fake
        if u.path.startswith("/cgi-bin/"):
            q = dict(urllib.parse.parse_qsl(u.query))
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError:
                return self.reply(200, f.err(47001, "data format error"))
            return self.reply(200, f.api(u.path[len("/cgi-bin/"):], q, body))
        if not u.path.startswith("/_test/"):
            return self.reply(404, {"error": "not found"})
        what = u.path[len("/_test/"):]
        body = json.loads(raw) if raw.strip() else {}
        if what == "messages":
            with f.lock:
                return self.reply(200, f.messages)
        if what == "calls":
            with f.lock:
                return self.reply(200, f.calls)
        if what == "expire":
            with f.lock:
                for t in f.tokens:
                    f.tokens[t] = 0
            return self.reply(200, {})
        if what in ("say", "forged"):
            xml, msgid = f.user_xml(body["user"], body["text"])
            out = f.callback(body["url"], xml, f.other if what == "forged" else None, body.get("age", 0))
            out["msgid"] = msgid
            return self.reply(200, out)
        if what == "click":
            code = secrets.token_hex(8)
            with f.lock:
                f.codes[code] = body["task_id"]
            xml = (f"<xml><ToUserName><![CDATA[{f.corp}]]></ToUserName><FromUserName><![CDATA[{body['user']}]]></FromUserName>"
                   f"<CreateTime>{int(time.time())}</CreateTime><MsgType><![CDATA[event]]></MsgType>"
                   f"<Event><![CDATA[template_card_event]]></Event><EventKey><![CDATA[{body['key']}]]></EventKey>"
                   f"<TaskId><![CDATA[{body['task_id']}]]></TaskId><CardType><![CDATA[button_interaction]]></CardType>"
                   f"<ResponseCode><![CDATA[{code}]]></ResponseCode><AgentID>{f.agent}</AgentID></xml>")
            return self.reply(200, f.callback(body["url"], xml))
        if what == "verify":
            echo = secrets.token_hex(10)
            nonce = secrets.token_hex(5)
            ts = str(int(time.time()))
            sealed = xmltodict.parse(f.crypto.encrypt_message(echo, nonce, ts))["xml"]
            q = urllib.parse.urlencode({"msg_signature": sealed["MsgSignature"], "timestamp": ts,
                                        "nonce": nonce, "echostr": sealed["Encrypt"]})
            status, text = send(f"{body['url']}?{q}", None, "GET")
            return self.reply(200, {"status": status, "body": text, "echo": echo})
        return self.reply(404, {"error": "unknown control endpoint"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corp-id", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--agent-id", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--aes-key", required=True)
    ap.add_argument("--user", action="append", default=[])
    args = ap.parse_args()
    Handler.fake = WeCom(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
