#!/usr/bin/env python3
"""Writes Tests/SyncrS3Tests/Fixtures/botocore-s3-signatures.json: SigV4 signatures that botocore
(the AWS CLI's library: `pip install awscli`) computes for S3 requests, so that SyncrS3's signer
is checked against an independent implementation on what syncr sends (ranges, keys with spaces
and unicode, query strings, session tokens, UNSIGNED-PAYLOAD and payload hashes).

Run from the repository root: python3 scripts/s3-fixtures.py. The output is committed; run it
again only to add cases. The credentials are AWS's documented examples, not real ones.
"""
import datetime
import hashlib
import json
import os
import sys
from unittest import mock

import botocore
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.utils import percent_encode

ACCESS = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE//////////wEaCXVzLWVhc3QtMSJGMEQCIDEXAMPLE+token/with=chars"
WHEN = datetime.datetime(2026, 11, 30, 19, 30, 5, tzinfo=datetime.timezone.utc)

# name, method, endpoint, path_style, region, bucket, key, query pairs, headers, body, unsigned, token
CASES = [
    ("get-object", "GET", "http://127.0.0.1:8333", True, "us-east-1", "artifacts", "builds/123/app.tar.gz",
     [], [], b"", False, False),
    ("get-range", "GET", "http://127.0.0.1:8333", True, "us-east-1", "artifacts", "builds/123/app.tar.gz",
     [], [("Range", "bytes=100-199")], b"", False, False),
    ("head-key-with-spaces-and-unicode", "HEAD", "http://127.0.0.1:8333", True, "us-east-1", "data",
     "images/val/my file ü 日本.txt", [], [], b"", False, False),
    ("get-key-with-reserved-characters", "GET", "http://localhost:9000", True, "eu-west-1", "data",
     "a+b=c&d$e@f,g;h:i'j(k)l*m!n~o_p-q.r%s", [], [], b"", False, False),
    ("list-objects-v2", "GET", "http://127.0.0.1:8333", True, "us-east-1", "datasets", "",
     [("list-type", "2"), ("prefix", "images/val/"), ("continuation-token", "1/ab+c=="), ("max-keys", "1000")],
     [], b"", False, False),
    ("get-with-session-token", "GET", "https://s3.eu-west-1.amazonaws.com", False, "eu-west-1", "artifacts",
     "builds/124/app.tar.gz", [], [("Range", "bytes=0-")], b"", False, True),
    ("put-unsigned-payload", "PUT", "https://s3.us-east-2.amazonaws.com", False, "us-east-2", "artifacts",
     "site/index.html", [],
     [("Content-MD5", "XUFAKrxLKna5cZ2REBfFkg=="), ("Content-Type", "text/html"),
      ("x-amz-meta-syncr-sha256", "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9")],
     b"hello", True, False),
    ("put-signed-payload", "PUT", "http://127.0.0.1:8333", True, "us-east-1", "artifacts", "notes/hello world.txt",
     [], [("x-amz-checksum-sha256", "qUiQTy8PR5uPgZdpSzAYSw0u0cHNKh7A+4XSmaGSpEc=")], b"hello world\n", False, False),
    ("create-multipart-upload", "POST", "http://127.0.0.1:8333", True, "us-east-1", "artifacts", "big/file.bin",
     [("uploads", "")], [], b"", False, False),
    ("upload-part", "PUT", "http://127.0.0.1:8333", True, "us-east-1", "artifacts", "big/file.bin",
     [("partNumber", "7"), ("uploadId", "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA")],
     [("Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg==")], b"", True, True),
    ("virtual-hosted-get", "GET", "https://s3.eu-central-1.amazonaws.com", False, "eu-central-1", "my-bucket-1",
     "k", [], [], b"", False, False),
]


def url_for(endpoint, path_style, bucket, key):
    scheme, _, host = endpoint.partition("://")
    path = "/" + percent_encode(key, safe="/~") if key else "/"
    if path_style:
        return f"{scheme}://{host}/{bucket}" + (path if key else "/")
    return f"{scheme}://{bucket}.{host}{path}"


def case(name, method, endpoint, path_style, region, bucket, key, query, headers, body, unsigned, token):
    url = url_for(endpoint, path_style, bucket, key)
    credentials = Credentials(ACCESS, SECRET, TOKEN if token else None)
    request = AWSRequest(method=method, url=url, headers=dict(headers), data=body or None, params=query)
    if unsigned:
        request.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    signer = botocore.auth.S3SigV4Auth(credentials, "s3", region)
    with mock.patch("botocore.auth.get_current_datetime", return_value=WHEN.replace(tzinfo=None)):
        signer.add_auth(request)
    authorization = request.headers["Authorization"]
    # The canonical request as it was signed: before the Authorization header was added.
    del request.headers["Authorization"]
    canonical = signer.canonical_request(request)
    return {
        "name": name, "method": method, "endpoint": endpoint, "pathStyle": path_style, "region": region,
        "bucket": bucket, "key": key, "query": [[k, v] for k, v in query], "headers": [[k, v] for k, v in headers],
        "sessionToken": token, "payloadHash": request.headers["X-Amz-Content-SHA256"], "url": url,
        "canonicalRequest": canonical, "stringToSign": signer.string_to_sign(request, canonical),
        "authorization": authorization,
        "bodySHA256": hashlib.sha256(body).hexdigest(),
    }


def main():
    out = {
        "generator": "scripts/s3-fixtures.py with botocore " + botocore.__version__,
        "accessKeyId": ACCESS, "secretAccessKey": SECRET, "sessionToken": TOKEN,
        "timestamp": WHEN.strftime("%Y%m%dT%H%M%SZ"),
        "cases": [case(*c) for c in CASES],
    }
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "Tests/SyncrS3Tests/Fixtures/botocore-s3-signatures.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
