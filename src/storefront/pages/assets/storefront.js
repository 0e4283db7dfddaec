/* global document, window */
// The shop's one script (every page works without it): the number of items in the header's cart link, and on a
// product page with several options, one select per option kept in sync with the form's variant select, showing the
// chosen variant's price and availability, and the price of the purchase option chosen (one-time or a selling plan)
// with its saving. Plain ES2019, no modules, nothing inline.
(function () {
  'use strict';

  // ---- The cart count ------------------------------------------------------------------------------------------
  // Reading /cart.js without a cart hands out a new one (and a cookie), so it is read only when this browser has a
  // cart: a readable `cart` cookie, or a mark this script leaves when a product is added (the cart cookie itself is
  // HttpOnly). A cart found empty clears the mark.
  var MARK = 'storefront.cart';
  var storage = null;
  try {
    storage = window.localStorage;
  } catch (error) {
    storage = null; // storage refused (privacy settings): the count shows only with a readable cookie
  }

  function marked() {
    if (/(?:^|;\s*)cart=/.test(document.cookie)) return true;
    try {
      return storage !== null && storage.getItem(MARK) === '1';
    } catch (error) {
      return false;
    }
  }

  function mark(on) {
    try {
      if (storage === null) return;
      if (on) storage.setItem(MARK, '1');
      else storage.removeItem(MARK);
    } catch (error) {
      // Nothing to do: the count is a convenience.
    }
  }

  function showCartCount() {
    var count = document.getElementById('cart-count');
    var link = document.getElementById('cart-link');
    if (!count || !link || !window.fetch) return;
    // The cart page shows whether this browser has a cart with something in it: from there on, the count is worth
    // reading, or not (asking /cart.js from an empty cart page would hand this browser a new cart and cookie).
    if (window.location.pathname === '/cart') mark(document.querySelector('.cart-lines') !== null);
    if (!marked()) return;
    window
      .fetch('/cart.js', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (cart) {
        if (!cart || typeof cart.item_count !== 'number') return;
        var items = cart.item_count;
        if (items > 0) {
          count.textContent = ' (' + items + ')';
          link.setAttribute('aria-label', 'Cart, ' + items + (items === 1 ? ' item' : ' items'));
        } else {
          count.textContent = '';
          link.removeAttribute('aria-label');
          mark(false);
        }
      })
      .catch(function () {
        // Offline or refused: the link still leads to the cart.
      });
  }

  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (form && form.getAttribute && /^\/cart\/add(?:$|[?.])/.test(form.getAttribute('action') || '')) mark(true);
  });

  // ---- The variant picker and the purchase options --------------------------------------------------------------
  function setText(id, text) {
    var element = document.getElementById(id);
    if (element) element.textContent = text;
  }

  function setHidden(id, hidden) {
    var element = document.getElementById(id);
    if (element) element.hidden = hidden;
  }

  /** Each plan's price for a variant (its option, or the hidden field of a product with one variant), by plan id. */
  function planOffers(element) {
    try {
      return JSON.parse(element.getAttribute('data-plans') || '{}') || {};
    } catch (error) {
      return {};
    }
  }

  /** The price of a variant bought once or on the plan chosen (''), with its saving, and each plan's price for it. */
  function showPrice(element, planId) {
    var offers = planOffers(element);
    var offer = planId !== '' && Object.prototype.hasOwnProperty.call(offers, planId) ? offers[planId] : null;
    var price = offer ? offer.price : element.getAttribute('data-price') || '';
    var was = offer ? offer.was : element.getAttribute('data-compare-at') || '';
    setText('price-amount', price);
    setText('price-was-amount', was);
    setText('price-label', was ? 'Sale price: ' : 'Price: ');
    setHidden('price-was', was === '');
    var now = document.getElementById('price-now');
    if (now) now.className = was ? 'price-now sale' : 'price-now';
    setText('plan-saving', offer ? offer.saving : '');
    setHidden('plan-saving', !offer || !offer.saving);
    for (var id in offers) {
      if (Object.prototype.hasOwnProperty.call(offers, id)) setText('plan-offer-' + id, offers[id].offer);
    }
    setText('plans-variant', element.getAttribute('data-title') || '');
  }

  function productForm() {
    var form = document.getElementById('product-form');
    var variantField = document.getElementById('variant-id');
    if (!form || !variantField || !form.querySelectorAll) return;
    var planInputs = form.querySelectorAll('input[name="selling_plan"]');
    var button = document.getElementById('add-to-cart');
    var variantSelect = variantField.tagName === 'SELECT' ? variantField : null;
    var pickers = document.getElementById('option-pickers');
    var optionSelects = variantSelect && pickers ? pickers.querySelectorAll('select') : [];
    var variants = [];
    for (var i = 0; variantSelect && i < variantSelect.options.length; i++) {
      var option = variantSelect.options[i];
      var values = [];
      try {
        values = JSON.parse(option.getAttribute('data-options') || '[]');
      } catch (error) {
        values = [];
      }
      variants.push({ option: option, values: values });
    }
    // The variant shown: the hidden field's, or the select's (null: the options chosen make no variant).
    var shown = variantSelect ? chosenVariant() : { option: variantField, values: [] };

    function chosenPlan() {
      for (var p = 0; p < planInputs.length; p++) {
        if (planInputs[p].checked) return planInputs[p].value;
      }
      return '';
    }

    function show(variant) {
      shown = variant;
      var available = variant !== null && variant.option.getAttribute('data-available') === 'true';
      var availability = document.getElementById('product-availability');
      if (variant === null) {
        setText('product-availability', 'This combination is not available');
      } else {
        showPrice(variant.option, chosenPlan());
        setText('product-availability', variant.option.getAttribute('data-status') || '');
      }
      if (availability) availability.className = 'availability ' + (available ? 'in-stock' : 'sold-out');
      if (button) {
        button.disabled = !available;
        button.textContent = available ? 'Add to cart' : variant === null ? 'Unavailable' : 'Sold out';
      }
    }

    /** The link says what is chosen (?variant=, ?selling_plan=), so it can be shared or reloaded as it is. */
    function remember() {
      if (!window.history || !window.history.replaceState || !window.URL) return;
      var url = new window.URL(window.location.href);
      if (variantSelect && shown) url.searchParams.set('variant', shown.option.value);
      var plan = chosenPlan();
      if (plan) url.searchParams.set('selling_plan', plan);
      else url.searchParams.delete('selling_plan');
      window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    }

    function chosenVariant() {
      for (var v = 0; v < variants.length; v++) {
        if (variants[v].option.value === variantSelect.value) return variants[v];
      }
      return null;
    }

    function fromOptions() {
      var chosen = [];
      for (var s = 0; s < optionSelects.length; s++) chosen.push(optionSelects[s].value);
      var match = null;
      for (var v = 0; v < variants.length && match === null; v++) {
        var same = variants[v].values.length === chosen.length;
        for (var c = 0; same && c < chosen.length; c++) same = variants[v].values[c] === chosen[c];
        if (same) match = variants[v];
      }
      // A sold-out variant is selected too (its option is disabled, so the form cannot send it: the button is off).
      if (match) match.option.selected = true;
      show(match);
      if (match) remember();
    }

    if (optionSelects.length > 1 && pickers) {
      if (shown) {
        for (var s = 0; s < optionSelects.length; s++) {
          if (shown.values[s] !== undefined) optionSelects[s].value = shown.values[s];
        }
      }
      pickers.hidden = false;
      var field = document.getElementById('variant-field');
      if (field) field.hidden = true;
      for (var o = 0; o < optionSelects.length; o++) optionSelects[o].addEventListener('change', fromOptions);
    }
    if (variantSelect) {
      variantSelect.addEventListener('change', function () {
        show(chosenVariant());
        remember();
      });
    }
    for (var p = 0; p < planInputs.length; p++) {
      planInputs[p].addEventListener('change', function () {
        if (shown) showPrice(shown.option, chosenPlan());
        remember();
      });
    }
    // A page come back to (history) may have its choices restored by the browser: the price follows them.
    if (shown && planInputs.length > 0) showPrice(shown.option, chosenPlan());
  }

  function start() {
    showCartCount();
    productForm();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
