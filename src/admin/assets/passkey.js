/* global document, window */
// The admin's only script: passkeys on the sign-in page (sign in with one) and the enrollment page (create one).
// It asks the store for a challenge, lets the browser's WebAuthn API sign it (through @simplewebauthn/browser,
// served beside it), sends the answer back, and goes where the store says once signed in.
(function () {
  'use strict';
  var WebAuthn = window.SimpleWebAuthnBrowser;
  var status = document.getElementById('passkey-status');

  function say(text) {
    if (status) status.textContent = text;
  }

  if (!WebAuthn || !WebAuthn.browserSupportsWebAuthn()) {
    if (document.getElementById('passkey-sign-in') || document.getElementById('passkey-enroll')) {
      say('This browser cannot use passkeys. Use a current browser, or ask whoever runs the store for a sign-in link.');
    }
    return;
  }

  function post(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().then(
        function (json) {
          if (!response.ok) throw new Error((json && json.description) || 'The store could not answer. Try again.');
          return json;
        },
        function () {
          throw new Error('The store could not answer. Try again.');
        },
      );
    });
  }

  function ceremony(containerId, start, waiting, refusedWords) {
    var container = document.getElementById(containerId);
    if (!container) return;
    var button = document.getElementById('passkey-button');
    container.hidden = false;
    button.addEventListener('click', function () {
      button.disabled = true;
      say(waiting);
      post(container.getAttribute('data-options'), {})
        .then(function (answer) {
          return start({ optionsJSON: answer.options }).then(function (credential) {
            say('Signing you in…');
            return post(container.getAttribute('data-verify'), { challenge_id: answer.challenge_id, response: JSON.stringify(credential) });
          });
        })
        .then(function (done) {
          say('Signed in.');
          window.location.assign(done.location || '/admin');
        })
        .catch(function (error) {
          button.disabled = false;
          say(error && error.name === 'NotAllowedError' ? refusedWords : (error && error.message) || refusedWords);
        });
    });
  }

  ceremony('passkey-sign-in', WebAuthn.startAuthentication, 'Waiting for your passkey…', 'The passkey was not used. Try again.');
  ceremony('passkey-enroll', WebAuthn.startRegistration, 'Waiting for your device…', 'No passkey was created. Try again.');
})();
