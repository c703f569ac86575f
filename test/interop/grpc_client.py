#!/usr/bin/env python3
"""An independent gRPC client (C-core, Debian's python3-grpcio) built from proto/users.proto alone.

Generates its stubs with grpc_tools.protoc into a temporary directory, then checks GetUser's
documented status codes against a running service:

    grpc_client.py HOST:PORT EXISTING_ID EXPECTED_NAME

Exits 0 when every check passes and prints one line per check.
"""
import importlib
import os
import sys
import tempfile

import grpc
from grpc_tools import protoc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_stubs():
    out = tempfile.mkdtemp(prefix="users-proto-")
    code = protoc.main(
        ["protoc", f"-I{ROOT}/proto", f"--python_out={out}", f"--grpc_python_out={out}", "users.proto"]
    )
    if code != 0:
        sys.exit(f"protoc failed with {code}")
    sys.path.insert(0, out)
    return importlib.import_module("users_pb2"), importlib.import_module("users_pb2_grpc")


def main():
    address, existing_id, expected_name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    messages, services = load_stubs()
    failures = 0

    def check(label, ok, detail):
        nonlocal failures
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {detail}")
        failures += 0 if ok else 1

    with grpc.insecure_channel(address) as channel:
        stub = services.UsersStub(channel)
        reply = stub.GetUser(messages.GetUserRequest(id=existing_id), timeout=5)
        check("found", reply.id == existing_id and reply.name == expected_name, f"{reply.id} {reply.name!r}")
        for request_id, expected in [
            (2147483647, grpc.StatusCode.NOT_FOUND),
            (0, grpc.StatusCode.INVALID_ARGUMENT),
            (-7, grpc.StatusCode.INVALID_ARGUMENT),
        ]:
            try:
                stub.GetUser(messages.GetUserRequest(id=request_id), timeout=5)
                check(f"id {request_id}", False, "succeeded")
            except grpc.RpcError as error:
                check(f"id {request_id}", error.code() == expected, f"{error.code().name} {error.details()!r}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
