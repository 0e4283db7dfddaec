/* global document, window */
// The shop's one script (every page works without it): the number of items in the header's cart link, and on a
// product page with several options, one select per option kept in sync with the form's variant select, showing the
// chosen variant's price and availability. Plain ES2019, no modules, nothing inline.
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

  // ---- The variant picker --------------------------------------------------------------------------------------
  function setText(id, text) {
    var element = document.getElementById(id);
    if (element) element.textContent = text;
  }

  function variantPicker() {
    var form = document.getElementById('product-form');
    var variantSelect = document.getElementById('variant-id');
    if (!form || !variantSelect || variantSelect.tagName !== 'SELECT') return;
    var button = document.getElementById('add-to-cart');
    var pickers = document.getElementById('option-pickers');
    var optionSelects = pickers ? pickers.querySelectorAll('select') : [];
    var variants = [];
    for (var i = 0; i < variantSelect.options.length; i++) {
      var option = variantSelect.options[i];
      var values = [];
      try {
        values = JSON.parse(option.getAttribute('data-options') || '[]');
      } catch (error) {
        values = [];
      }
      variants.push({ option: option, values: values });
    }

    function show(variant) {
      var available = variant !== null && variant.option.getAttribute('data-available') === 'true';
      var availability = document.getElementById('product-availability');
      if (variant === null) {
        setText('product-availability', 'This combination is not available');
      } else {
        var compareAt = variant.option.getAttribute('data-compare-at') || '';
        setText('price-amount', variant.option.getAttribute('data-price') || '');
        setText('price-was-amount', compareAt);
        setText('price-label', compareAt ? 'Sale price: ' : 'Price: ');
        var was = document.getElementById('price-was');
        if (was) was.hidden = compareAt === '';
        var now = document.getElementById('price-now');
        if (now) now.className = compareAt ? 'price-now sale' : 'price-now';
        setText('product-availability', variant.option.getAttribute('data-status') || '');
      }
      if (availability) availability.className = 'availability ' + (available ? 'in-stock' : 'sold-out');
      if (button) {
        button.disabled = !available;
        button.textContent = available ? 'Add to cart' : variant === null ? 'Unavailable' : 'Sold out';
      }
    }

    function remember(variant) {
      if (!variant || !window.history || !window.history.replaceState || !window.URL) return;
      var url = new window.URL(window.location.href);
      url.searchParams.set('variant', variant.option.value);
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
      remember(match);
    }

    if (optionSelects.length > 1 && pickers) {
      var current = chosenVariant();
      if (current) {
        for (var s = 0; s < optionSelects.length; s++) {
          if (current.values[s] !== undefined) optionSelects[s].value = current.values[s];
        }
      }
      pickers.hidden = false;
      var field = document.getElementById('variant-field');
      if (field) field.hidden = true;
      for (var o = 0; o < optionSelects.length; o++) optionSelects[o].addEventListener('change', fromOptions);
    }
    variantSelect.addEventListener('change', function () {
      var variant = chosenVariant();
      show(variant);
      remember(variant);
    });
  }

  function start() {
    showCartCount();
    variantPicker();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
