#!/bin/sh
# moto's S3 server on :9000 with the buckets named in S3_BUCKETS (space-separated) created once it
# answers, so the registry finds its bucket at start. The healthcheck asks for those buckets.
set -eu
moto_server -H 0.0.0.0 -p 9000 &
server=$!
trap 'kill -TERM "$server"' TERM INT
python3 - <<'PY'
import os
import time

import boto3
from botocore.exceptions import EndpointConnectionError

s3 = boto3.client(
    "s3", endpoint_url="http://127.0.0.1:9000", region_name="us-east-1",
    aws_access_key_id="moto", aws_secret_access_key="moto",
)
for _ in range(100):  # moto starts in about a second; give up after 20
    try:
        s3.list_buckets()
        break
    except EndpointConnectionError:
        time.sleep(0.2)
for bucket in os.environ.get("S3_BUCKETS", "").split():
    s3.create_bucket(Bucket=bucket)
PY
wait "$server"
