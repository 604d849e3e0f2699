"""An OpenID Connect provider on loopback for the tests, built on Authlib's authorization server
(Authorization Code with PKCE, OpenID's code flow): discovery, JWKS, authorize, token.

    python3 openid_provider.py PORT [ALG [INSTANCE]]      (ALG: RS256, the default, or ES256)

One person, "alice" (sub "alice-sub", name "Alice Kim", a verified address), signs in without a
form: the authorize step answers at once with the redirect a person's consent would give. One
client, "weatherboard" with the secret "provider-secret", for any redirect URI on loopback.

As a hostile or broken provider, the tests may set the next answers' faults with
`POST /_test/faults` (JSON): {"id_token": "alg-none" | "hs256-public-key" | "wrong-aud" |
"expired" | "other-nonce" | "wrong-key"}, {"jwks": "huge" | "slow" | "not-json"},
{"issuer": "http://..."} (discovery names another issuer). Each applies until changed.
"""
import base64
import hashlib
import hmac
import json
import secrets
import sys
import time

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.jose import JsonWebKey, jwt
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, Response, jsonify, request

PORT = int(sys.argv[1])
ALG = sys.argv[2] if len(sys.argv) > 2 else "RS256"
# Said in the discovery document: the test knows it reached this process, not another on the port.
INSTANCE = sys.argv[3] if len(sys.argv) > 3 else ""
ISSUER = f"http://127.0.0.1:{PORT}"
KEY = JsonWebKey.generate_key("RSA", 2048, is_private=True) if ALG == "RS256" else JsonWebKey.generate_key("EC", "P-256", is_private=True)
KID = KEY.as_dict(is_private=False)["kid"]  # the key's thumbprint, as Authlib names it in the header
OTHER_KEY = JsonWebKey.generate_key("RSA", 2048, is_private=True) if ALG == "RS256" else JsonWebKey.generate_key("EC", "P-256", is_private=True)
FAULTS = {}
CODES = {}
NONCES = set()


class User:
    id = "alice-sub"

    def get_user_id(self):
        return self.id


ALICE = User()


class Client(ClientMixin):
    client_id = "weatherboard"
    client_secret = "provider-secret"

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return " ".join(s for s in scope.split() if s in ("openid", "profile", "email"))

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri.startswith("http://127.0.0.1:") or redirect_uri.startswith("http://localhost:")

    def check_client_secret(self, client_secret):
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method, endpoint):
        return method in ("client_secret_post", "client_secret_basic")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type == "authorization_code"


CLIENT = Client()


class Code(AuthorizationCodeMixin):
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time

    def get_acr(self):
        return None

    def get_amr(self):
        return None


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_post", "client_secret_basic"]

    def save_authorization_code(self, code, request):
        payload = request.payload
        CODES[code] = Code(code=code, client_id=CLIENT.client_id, redirect_uri=payload.redirect_uri, scope=payload.scope,
                           nonce=payload.data.get("nonce"), auth_time=int(time.time()),
                           code_challenge=payload.data.get("code_challenge"),
                           code_challenge_method=payload.data.get("code_challenge_method"))
        NONCES.add(payload.data.get("nonce"))

    def query_authorization_code(self, code, client):
        return CODES.get(code)

    def delete_authorization_code(self, authorization_code):
        CODES.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return ALICE


class IDToken(OpenIDCode):
    def exists_nonce(self, nonce, request):
        return nonce in NONCES

    def get_jwt_config(self, grant):
        return {"key": KEY.as_dict(is_private=True), "alg": ALG, "iss": ISSUER, "exp": 600, "kid": KID}

    def generate_user_info(self, user, scope):
        return UserInfo(sub=user.id, name="Alice Kim", email="alice@example.org", email_verified=True)


app = Flask(__name__)


def save_token(token, request):
    pass


server = AuthorizationServer(app, query_client=lambda client_id: CLIENT if client_id == CLIENT.client_id else None, save_token=save_token)
server.register_grant(CodeGrant, [CodeChallenge(required=True), IDToken(require_nonce=True)])


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def tampered(id_token):
    """The ID token as the fault set asks: re-made from its claims, signed otherwise."""
    fault = FAULTS.get("id_token")
    if not fault:
        return id_token
    claims = json.loads(base64.urlsafe_b64decode(id_token.split(".")[1] + "=="))
    if fault == "alg-none":
        return b64(json.dumps({"alg": "none", "kid": KID}).encode()) + "." + b64(json.dumps(claims).encode()) + "."
    if fault == "hs256-public-key":
        # The old confusion: HMAC keyed with the public key's PEM (made by hand: Authlib refuses to).
        signing_input = b64(json.dumps({"alg": "HS256", "kid": KID}).encode()) + "." + b64(json.dumps(claims).encode())
        mac = hmac.new(KEY.as_pem(is_private=False), signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + b64(mac)
    if fault == "wrong-aud":
        claims["aud"] = ["someone-else"]
    elif fault == "expired":
        claims["exp"] = int(time.time()) - 3600
        claims["iat"] = int(time.time()) - 7200
    elif fault == "other-nonce":
        claims["nonce"] = "a-nonce-from-another-attempt"
    if fault == "wrong-key":
        # Another key's signature under the issuer's key id.
        other = {k: v for k, v in OTHER_KEY.as_dict(is_private=True).items() if k != "kid"}
        return jwt.encode({"alg": ALG, "kid": KID}, claims, other).decode()
    return jwt.encode({"alg": ALG, "kid": KID}, claims, KEY.as_dict(is_private=True)).decode()


@app.get("/.well-known/openid-configuration")
def discovery():
    return jsonify({
        "issuer": FAULTS.get("issuer", ISSUER),
        "authorization_endpoint": ISSUER + "/authorize",
        "token_endpoint": ISSUER + "/token",
        "jwks_uri": ISSUER + "/jwks",
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [ALG],
        "x_test_instance": INSTANCE,
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "scopes_supported": ["openid", "profile", "email"],
    })


@app.get("/jwks")
def jwks():
    fault = FAULTS.get("jwks")
    if fault == "not-json":
        return Response("<html>not a key set</html>", content_type="text/html")
    if fault == "slow":
        time.sleep(6)
    keys = [dict(KEY.as_dict(is_private=False), kid=KID, use="sig", alg=ALG)]
    if fault == "huge":
        keys = keys + [dict(OTHER_KEY.as_dict(is_private=False), kid=f"filler-{n}", use="sig", alg=ALG) for n in range(2000)]
    return jsonify({"keys": keys})


@app.get("/authorize")
def authorize():
    if request.args.get("prompt_result") == "cancel":
        return Response(status=302, headers={"Location": request.args["redirect_uri"] + "?error=access_denied&state=" + request.args.get("state", "")})
    return server.create_authorization_response(grant_user=ALICE)


@app.post("/token")
def token():
    response = server.create_token_response()
    if response.status_code == 200 and FAULTS.get("id_token"):
        body = json.loads(response.get_data())
        body["id_token"] = tampered(body["id_token"])
        response.set_data(json.dumps(body))
    return response


@app.post("/_test/faults")
def faults():
    FAULTS.clear()
    FAULTS.update(request.get_json(force=True))
    return jsonify(FAULTS)


if __name__ == "__main__":
    import logging
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app.run(host="127.0.0.1", port=PORT, threaded=True)
