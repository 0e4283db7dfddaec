/* global document, window, FormData */
// The store's only page script: passkeys on the approval page (approve with one) and on the order page (create one
// after a code proved the email). It asks the store for a challenge, lets the browser's WebAuthn API sign it
// (through @simplewebauthn/browser, served beside it), and sends the answer back. The code path needs none of it.
(function () {
  'use strict';
  var WebAuthn = window.SimpleWebAuthnBrowser;
  if (!WebAuthn || !WebAuthn.browserSupportsWebAuthn()) return;

  function say(element, text) {
    if (element) element.textContent = text;
  }

  function post(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().then(function (json) {
        if (!response.ok) throw new Error((json && json.description) || 'The store could not answer. Try again.');
        return json;
      });
    });
  }

  // Approval page: ask for a challenge bound to this page's order, sign it, post the form.
  var approval = document.getElementById('passkey-approval');
  if (approval) {
    var form = document.getElementById('passkey-form');
    var button = document.getElementById('passkey-button');
    var status = document.getElementById('passkey-status');
    approval.hidden = false;
    button.addEventListener('click', function () {
      button.disabled = true;
      say(status, 'Waiting for your passkey…');
      var fields = new FormData(form);
      post(approval.getAttribute('data-options'), { form_token: fields.get('form_token'), digest: fields.get('digest') })
        .then(function (answer) {
          return WebAuthn.startAuthentication({ optionsJSON: answer.options }).then(function (assertion) {
            form.elements.challenge_id.value = answer.challenge_id;
            form.elements.assertion.value = JSON.stringify(assertion);
            say(status, 'Placing your order…');
            form.submit();
          });
        })
        .catch(function (error) {
          button.disabled = false;
          say(status, (error && error.name === 'NotAllowedError' ? 'The passkey was not used.' : (error && error.message) || 'The passkey did not work.') + ' You can use the emailed code instead.');
        });
    });
  }

  // Order page: create a passkey for next time.
  var enroll = document.getElementById('passkey-enroll');
  if (enroll) {
    var create = document.getElementById('passkey-create');
    var told = document.getElementById('passkey-enroll-status');
    enroll.hidden = false;
    create.addEventListener('click', function () {
      create.disabled = true;
      say(told, 'Waiting for your device…');
      post(enroll.getAttribute('data-options'), {})
        .then(function (answer) {
          return WebAuthn.startRegistration({ optionsJSON: answer.options }).then(function (registration) {
            return post(enroll.getAttribute('data-register'), { challenge_id: answer.challenge_id, response: JSON.stringify(registration) });
          });
        })
        .then(function () {
          say(told, 'Your passkey is created. Next time, approve with it alone.');
        })
        .catch(function (error) {
          create.disabled = false;
          say(told, error && error.name === 'NotAllowedError' ? 'No passkey was created.' : (error && error.message) || 'No passkey was created.');
        });
    });
  }
})();
