#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Log in to a Jupyter server with each given password the way a browser does, and report what
each login opened. jupyter_server's LoginFormHandler: GET /login sets the _xsrf cookie; a POST of
/login with that cookie and the same _xsrf in the form, with the password, answers a password that
logs in with a redirect that sets the login cookie. Each password starts in a browser of its own
(an empty cookie jar); after its login, /api/kernelspecs is asked with the cookies it got.

Reads {"url": ..., "passwords": [...]} as JSON on stdin (never argv: other users see a command
line). Prints one JSON list, a record per password in order: the status of the login page and of
the login, the names of the cookies the login set, the status of the kernels request and the kernel
names it listed. Never prints a password or a cookie's value. Standard library only. Certificates
are not checked, as the role's other checks of the same server do not (a self-signed one is usual)."""

import http.cookiejar
import json
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request


class _KeepRedirect(urllib.request.HTTPRedirectHandler):
    """The login's redirect is its answer: not followed."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _request(opener, url, data=None):
    """(status, body) of one request; an HTTP error status is an answer too."""
    try:
        with opener.open(url, data=data, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def log_in(url, password, context):
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar),
                                         urllib.request.HTTPSHandler(context=context), _KeepRedirect)
    record = {"login_page": None, "login": None, "cookies_set": [], "api": None, "kernels": []}
    record["login_page"], _body = _request(opener, url + "/login")
    xsrf = [cookie.value for cookie in jar if cookie.name == "_xsrf"]
    if not xsrf:
        return record
    before = dict((cookie.name, cookie.value) for cookie in jar)
    form = urllib.parse.urlencode({"password": password, "_xsrf": xsrf[0]}).encode("utf-8")
    record["login"], _body = _request(opener, url + "/login", data=form)
    record["cookies_set"] = sorted(cookie.name for cookie in jar if before.get(cookie.name) != cookie.value)
    record["api"], body = _request(opener, url + "/api/kernelspecs")
    if record["api"] == 200:
        record["kernels"] = sorted(json.loads(body.decode("utf-8")).get("kernelspecs", {}))
    return record


def main():
    asked = json.load(sys.stdin)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    print(json.dumps([log_in(asked["url"].rstrip("/"), password, context) for password in asked["passwords"]]))


if __name__ == "__main__":
    main()
