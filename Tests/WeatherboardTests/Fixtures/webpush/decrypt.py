#!/usr/bin/env python3
"""Decrypts what the site pushed, as the browser holding the subscription would: with
`http_ece` (from PyPI, an implementation of RFC 8188/8291 independent of the site's).
    decrypt.py BODY_FILE RECEIVER_PRIVATE_KEY_B64URL AUTH_B64URL > plaintext"""
import base64, sys
import http_ece
from cryptography.hazmat.primitives.asymmetric import ec

def b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

key = ec.derive_private_key(int.from_bytes(b64(sys.argv[2]), "big"), ec.SECP256R1())
body = open(sys.argv[1], "rb").read()
sys.stdout.write(http_ece.decrypt(body, private_key=key, auth_secret=b64(sys.argv[3]), version="aes128gcm").decode())
