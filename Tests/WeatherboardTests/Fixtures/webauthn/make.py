#!/usr/bin/env python3
"""Makes webauthn.json: registrations and sign-ins as an authenticator would send them, signed
with keys made here by the `cryptography` package and encoded by `cbor2` (both from PyPI): an
oracle independent of the site's own CBOR reader and of swift-crypto. Run it again only to add
cases; the tests read the committed JSON.
    pip install cryptography cbor2 && python3 make.py > webauthn.json"""
import base64, hashlib, json, struct
import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

ORIGIN, RP_ID = "https://weather.example", "weather.example"

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

def client_data(kind, challenge, origin=ORIGIN):
    return json.dumps({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False}).encode()

def auth_data(flags, count, attested=b"", rp_id=RP_ID):
    return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", count) + attested

def ec_case(seed):
    key = ec.derive_private_key(seed, ec.SECP256R1())
    numbers = key.public_key().public_numbers()
    cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
    return key, cose, lambda data: key.sign(data, ec.ECDSA(hashes.SHA256()))

def rsa_case():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    cose = cbor2.dumps({1: 3, 3: -257, -1: numbers.n.to_bytes(256, "big"), -2: numbers.e.to_bytes(3, "big")})
    return key, cose, lambda data: key.sign(data, padding.PKCS1v15(), hashes.SHA256())

cases = {}
for name, (key, cose, sign) in {"es256": ec_case(0x5EED), "rs256": rsa_case()}.items():
    credential = hashlib.sha256(name.encode()).digest()
    attested = bytes(16) + struct.pack(">H", len(credential)) + credential + cose
    reg_challenge = b64(hashlib.sha256(b"register " + name.encode()).digest())
    registration = {
        "challenge": reg_challenge,
        "clientDataJSON": b64(client_data("webauthn.create", reg_challenge)),
        "attestationObject": b64(cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data(0x45, 0, attested)})),
        "credentialId": b64(credential), "publicKey": b64(cose),
    }
    get_challenge = b64(hashlib.sha256(b"sign in " + name.encode()).digest())
    data, cdj = auth_data(0x05, 7), client_data("webauthn.get", get_challenge)
    assertion = {
        "challenge": get_challenge, "clientDataJSON": b64(cdj), "authenticatorData": b64(data),
        "signature": b64(sign(data + hashlib.sha256(cdj).digest())), "signCount": 7,
    }
    # Signed correctly, but for another origin, another RP ID, or without user presence: each
    # must be refused for that reason, not for its signature.
    variants = {}
    for label, cdj2, data2 in [
        ("otherOrigin", client_data("webauthn.get", get_challenge, "https://evil.example"), data),
        ("otherRPID", cdj, auth_data(0x05, 7, rp_id="evil.example")),
        ("noPresence", cdj, auth_data(0x04, 7)),
    ]:
        variants[label] = {"clientDataJSON": b64(cdj2), "authenticatorData": b64(data2),
                           "signature": b64(sign(data2 + hashlib.sha256(cdj2).digest()))}
    cases[name] = {"registration": registration, "assertion": assertion, "variants": variants}

print(json.dumps({"origin": ORIGIN, "rpId": RP_ID, "cases": cases}, indent=2, sort_keys=True))
