"""A moto server that authenticates requests, for the vended-credentials test.

    python moto_iam_server.py PORT       (with INITIAL_NO_AUTH_ACTION_COUNT in the environment)

moto 5 checks a SigV4 signature against the request's query string as its web framework decoded
it, while botocore's canonical request takes a URL's query string as already encoded: every
signed request with a value that needs encoding (ListObjectsV2 with ``delimiter=/``, which s3fs
sends for every ``exists``) is refused as SignatureDoesNotMatch. This wrapper encodes the query
again, as the client signed it, before moto rebuilds the request; the check itself is moto's.
"""
from __future__ import annotations

import sys
from urllib.parse import parse_qsl, quote


def main() -> None:
    from moto.iam import access_control

    original = access_control.IAMRequestBase._create_aws_request

    def create_aws_request(self):  # noqa: ANN001, ANN202
        path, sep, query = self._path.partition("?")
        if sep:
            self._path = path + "?" + "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
                                               for k, v in parse_qsl(query, keep_blank_values=True))
        return original(self)

    access_control.IAMRequestBase._create_aws_request = create_aws_request
    from moto.server import main as moto_main

    moto_main(["-H", "127.0.0.1", "-p", sys.argv[1]])


if __name__ == "__main__":
    main()
