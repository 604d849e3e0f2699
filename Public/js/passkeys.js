// Passkeys (WebAuthn), the browser's half. The server gives the options as JSON; the answer goes
// back as an ordinary form post, so what follows (the next page, an error) is an ordinary page.
(function () {
  "use strict";
  var supported = !!(window.PublicKeyCredential && navigator.credentials);

  function bytes(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(base64 + "===".slice((base64.length + 3) % 4));
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function text(buffer) {
    var raw = "", view = new Uint8Array(buffer);
    for (var i = 0; i < view.length; i++) raw += String.fromCharCode(view[i]);
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // A same-origin form post whose answer is JSON: {status, body}.
  function ask(url, fields) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields)
    }).then(function (response) {
      return response.json().then(function (body) { return { status: response.status, body: body }; });
    });
  }

  function say(form, message) {
    var box = form.querySelector("[data-passkey-error]") || document.querySelector("[data-passkey-error]");
    if (!box) return;
    box.textContent = message;
    box.hidden = false;
  }

  function fill(form, values) {
    Object.keys(values).forEach(function (name) { form.elements[name].value = values[name]; });
  }

  function creation(options) {
    options.challenge = bytes(options.challenge);
    options.user.id = bytes(options.user.id);
    options.excludeCredentials = (options.excludeCredentials || []).map(function (c) { return { type: c.type, id: bytes(c.id) }; });
    return { publicKey: options };
  }

  function made(credential) {
    return { client_data: text(credential.response.clientDataJSON), attestation: text(credential.response.attestationObject) };
  }

  // Signing in: the button, and the browser's suggestion in the username field.
  var signIn = document.querySelector("form[data-passkey-form=sign-in]");
  if (signIn) {
    var button = signIn.querySelector("[data-passkey-sign-in]");
    if (!supported) { button.hidden = true; return; }
    var waiting = null;
    var request = function (extra) {
      return ask("/login/passkey/options", {}).then(function (answer) {
        var options = answer.body;
        options.challenge = bytes(options.challenge);
        return navigator.credentials.get(Object.assign({ publicKey: options }, extra));
      }).then(function (credential) {
        if (!credential) return;
        var response = credential.response;
        fill(signIn, {
          credential_id: credential.id, client_data: text(response.clientDataJSON),
          authenticator_data: text(response.authenticatorData), signature: text(response.signature),
          user_handle: response.userHandle ? text(response.userHandle) : ""
        });
        signIn.submit();
      });
    };
    button.addEventListener("click", function () {
      if (waiting) waiting.abort();
      waiting = null;
      request({}).catch(function () { say(signIn, button.dataset.cancelled); });
    });
    // Not again right after a passkey failed here: the page says why, and the button remains.
    if (PublicKeyCredential.isConditionalMediationAvailable && !document.getElementById("sign-in-error")) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        if (!available) return;
        waiting = new AbortController();
        request({ mediation: "conditional", signal: waiting.signal }).catch(function () {});
      });
    }
  }

  // Adding one in settings.
  var register = document.querySelector("form[data-passkey-form=register]");
  if (register) {
    var add = register.querySelector("[data-passkey-add]");
    if (!supported) { add.disabled = true; say(register, add.dataset.unsupported); }
    add.addEventListener("click", function () {
      ask("/settings/passkeys/options", { name: register.elements.name.value }).then(function (answer) {
        return navigator.credentials.create(creation(answer.body));
      }).then(function (credential) {
        fill(register, made(credential));
        register.submit();
      }).catch(function () { say(register, add.dataset.cancelled); });
    });
  }

  // Signing up with a passkey and no password.
  var signUp = document.querySelector("[data-passkey-sign-up]");
  var finish = document.querySelector("form[data-passkey-form=sign-up]");
  if (signUp && finish) {
    var form = signUp.form;
    if (!supported) { signUp.hidden = true; return; }
    signUp.addEventListener("click", function () {
      var fields = {};
      ["username", "display_name", "email", "next"].forEach(function (name) {
        if (form.elements[name]) fields[name] = form.elements[name].value;
      });
      ask("/signup/passkey/options", fields).then(function (answer) {
        if (answer.status !== 200) {
          var errors = answer.body.errors || {};
          say(form, Object.keys(errors).map(function (k) { return errors[k]; }).join(" "));
          return;
        }
        return navigator.credentials.create(creation(answer.body)).then(function (credential) {
          fill(finish, made(credential));
          finish.submit();
        });
      }).catch(function () { say(form, signUp.dataset.cancelled); });
    });
  }
})();
