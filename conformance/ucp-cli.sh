#!/usr/bin/env bash
# Runs Shopify's reference UCP client, @shopify/ucp-cli 0.9.0, against the commerce door, all on loopback, twice: with
# the CLI's default agent profile (UCP 2026-08-25, the release of /.well-known/ucp) and with `ucp profile init
# --version 2026-04-08` (the CLI follows the profile's supported_versions to the 2026-04-08 leaf, and every answer of
# the store is in that release). Each time:
#   1. `ucp profile init` writes the agent profile the CLI presents, served here over http;
#   2. `ucp discover` reads /.well-known/ucp (and the leaf of the chosen release) and tools/list;
#   3. `ucp catalog search` finds products (the store fetches and negotiates the agent profile);
#   4. `ucp cart create` makes a cart with a variant the search returned;
#   5. `ucp checkout create` checks that cart out with a buyer and a US address;
#   6. `ucp checkout update` replaces its state (express shipping);
#   7. `ucp checkout complete` is answered requires_escalation with the buyer's approval link, never an order; the
#      CLI's --on-escalation hook (conformance/approve-in-browser.mjs) approves on that page in headless Chromium,
#      passing the buyer's proof the store asks by default (APPROVAL_PROOF=passkey-or-code; a first-time buyer has no
#      passkey): it clicks "Email me a code", reads the code from the mail the store wrote (no SMTP_URL: an .eml file
#      in DATA_DIR/mail, named to the hook by STOREFRONT_MAIL_DIR), types it and approves. The code path needs no
#      WebAuthn, so a BASE_URL on 127.0.0.1 (an IP address, which WebAuthn refuses as RP ID) is fine here;
#   8. `ucp checkout get` then answers completed with the order, and `ucp order get` the order.
# Each step's exit code and key fields are checked; the script prints PASS/FAIL per step and exits non-zero
# on any failure. The store is built (`npm run build`, as `npm start` does) and starts on a free loopback port (embedded PostgreSQL in a temporary directory,
# RATE_LIMIT=off, UCP_ALLOW_INSECURE_PROFILES=on so it fetches the profile over plain http from loopback, the default
# APPROVAL_PROOF and no SMTP_URL whatever the environment says, so the hook finds the code mail as a file);
# the CLI runs with UCP_TEST_ALLOW_INSECURE_LOCALHOST=true and its state in a temporary UCP_HOME. The CLI
# needs Node >= 22.19; npx brings Node 22 from the npm registry (`-p node@22`).
#   UCP_CLI_FROM_SOURCE=1 runs the store from src/ with tsx instead of building dist/.
#   UCP_CLI_KEEP=1 keeps the temporary directory (CLI outputs, server logs) and prints where it is.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CLI_PACKAGE="@shopify/ucp-cli@0.9.0"

WORK="$(mktemp -d)"
SERVER_PID=""
PROFILE_PID=""
stop() {
  if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}
cleanup() {
  stop "$SERVER_PID"
  stop "$PROFILE_PID"
  rm -rf "$WORK/data"
  if [ -n "${UCP_CLI_KEEP:-}" ]; then echo "ucp-cli: outputs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
PORT="$(free_port)"
PROFILE_PORT="$(free_port)"
while [ "$PROFILE_PORT" = "$PORT" ]; do PROFILE_PORT="$(free_port)"; done
BUSINESS="http://127.0.0.1:$PORT"
# Without SMTP_URL the store writes each mail, the buyer's approval code included, as an .eml file here; the
# --on-escalation hook reads the code from it.
export STOREFRONT_MAIL_DIR="$WORK/data/mail"
PROFILES="http://127.0.0.1:$PROFILE_PORT"

export UCP_HOME="$WORK/ucp-home"
export UCP_TEST_ALLOW_INSECURE_LOCALHOST=true
unset UCP_PROFILE UCP_AGENT_PROFILE_URL UCP_BUSINESS

failures=0
pass() { echo "ucp-cli: PASS $1"; }
fail() {
  echo "ucp-cli: FAIL $1" >&2
  failures=$((failures + 1))
}

# The CLI and Node 22 are fetched once, into npx's cache; each step then runs them from there with the PATH npx
# gives them (npx itself costs about a second a call, and a run makes about twenty).
CLI_PATH="$(npx -y -p node@22 -p "$CLI_PACKAGE" -c 'printf %s "$PATH"')"

# Runs the CLI with JSON output into $WORK/NAME.json (stderr in NAME.err); returns its exit code.
ucp() {
  local name="$1"
  shift
  local status=0
  PATH="$CLI_PATH" command ucp "$@" --format json > "$OUT/$name.json" 2> "$OUT/$name.err" || status=$?
  return "$status"
}

# Checks a step's JSON output with a JavaScript function body over `out` (and `env`); it returns
# an error message, or nothing when the output is right. Prints the message (and the output) on failure.
check() {
  local name="$1" expression="$2"
  node -e '
    const fs = require("fs");
    const [file, expression] = process.argv.slice(1);
    let out;
    try { out = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { console.log("the output is not JSON: " + e.message); process.exit(1); }
    const env = process.env;
    const problem = new Function("out", "env", "require", expression)(out, env, require);
    if (problem) { console.log(problem); process.exit(1); }
  ' "$OUT/$name.json" "$expression"
}

report() {
  local name="$1" what="$2" status="$3"
  if [ "$status" -ne 0 ]; then
    fail "$what (exit $status)"
    echo "--- ucp $name output ---" >&2
    head -c 4000 "$OUT/$name.json" >&2 || true
    echo >&2
    grep -v '^npm warn' "$OUT/$name.err" | head -c 4000 >&2 || true
    return 1
  fi
  local problem
  if problem="$(check "$name" "$4")"; then
    pass "$what${5:+: $5}"
  else
    fail "$what: $problem"
    echo "--- ucp $name output ---" >&2
    head -c 4000 "$OUT/$name.json" >&2 || true
    echo >&2
    return 1
  fi
}

if [ -n "${UCP_CLI_FROM_SOURCE:-}" ]; then
  STORE=(node --import tsx src/main.ts serve)
else
  echo "ucp-cli: building the storefront (npm run build)"
  npm run build --silent
  STORE=(node dist/main.js serve)
fi
echo "ucp-cli: starting the storefront on $BUSINESS"
env PORT="$PORT" HOST=127.0.0.1 BASE_URL="$BUSINESS" DATA_DIR="$WORK/data" DATABASE_URL= \
  RATE_LIMIT=off UCP_ALLOW_INSECURE_PROFILES=on LOG_LEVEL=warn APPROVAL_PROOF=passkey-or-code SMTP_URL= \
  "${STORE[@]}" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!

# The agent profiles the CLI presents, each served as written where it says it is: /NAME/profile.json is the file
# `ucp profile init --name NAME` wrote into UCP_HOME. The store's fetches are counted.
mkdir -p "$UCP_HOME/profiles"
node -e '
  const [home, port, hits] = process.argv.slice(1);
  const fs = require("fs");
  require("http").createServer((request, response) => {
    fs.appendFileSync(hits, `${request.method} ${request.url}\n`);
    if (request.url === "/ready") return response.writeHead(200).end();
    const match = /^\/([a-z0-9-]+)\/profile\.json$/.exec(request.url);
    const file = match && `${home}/profiles/${match[1]}/profile.json`;
    if (!file || !fs.existsSync(file)) return response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/json" }).end(fs.readFileSync(file));
  }).listen(Number(port), "127.0.0.1");
' "$UCP_HOME" "$PROFILE_PORT" "$WORK/profile-hits.log" > "$WORK/profile-server.log" 2>&1 &
PROFILE_PID=$!

ready() { node -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "$1"; }
for _ in $(seq 1 120); do
  if ready "$BUSINESS/healthz" && ready "$PROFILES/ready"; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "ucp-cli: the storefront exited before it was ready:" >&2
    cat "$WORK/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
ready "$BUSINESS/healthz" || { echo "ucp-cli: the storefront did not become ready" >&2; cat "$WORK/server.log" >&2; exit 1; }
ready "$PROFILES/ready" || { echo "ucp-cli: the profile server did not become ready" >&2; cat "$WORK/profile-server.log" >&2; exit 1; }
: > "$WORK/profile-hits.log" # the readiness probes are not the store's fetches

# The whole flow with one agent profile: RELEASE is the UCP release it is of, NAME its name; the rest are the
# arguments `ucp profile init` is given (none: the CLI's default release).
flow() {
  RELEASE="$1"
  NAME="$2"
  shift 2
  OUT="$WORK/$NAME"
  mkdir -p "$OUT"
  PROFILE_URL="$PROFILES/$NAME/profile.json"
  PROFILE_FILE="$UCP_HOME/profiles/$NAME/profile.json"
  export RELEASE PROFILE_URL PROFILE_FILE BUSINESS
  echo "ucp-cli: --- the flow with a UCP $RELEASE agent profile (ucp profile init $*) ---"

  # 1. profile init: the profile the CLI presents, written into UCP_HOME, naming where it is served.
  local status=0
  ucp profile-init profile init --name "$NAME" "$@" --profile-url "$PROFILE_URL" --activate || status=$?
  report profile-init "profile init" "$status" '
    if (out.version !== env.RELEASE) return "version is " + JSON.stringify(out.version);
    if (out.profile_url !== env.PROFILE_URL) return "profile_url is " + JSON.stringify(out.profile_url);
    if (out.activated !== true) return "the profile was not activated";
    const profile = JSON.parse(require("fs").readFileSync(env.PROFILE_FILE, "utf8"));
    if (profile.ucp?.version !== env.RELEASE) return "the written profile has ucp.version " + JSON.stringify(profile.ucp?.version);
    if (!profile.ucp.capabilities?.["dev.ucp.shopping.cart"]) return "the written profile does not declare dev.ucp.shopping.cart";
  ' "wrote $PROFILE_FILE for $PROFILE_URL" || { fail "no $RELEASE profile to serve"; return; }
  export UCP_PROFILE="$NAME"

  # 2. discover: the business profile and the MCP tools.
  status=0
  ucp discover discover "$BUSINESS" --refresh || status=$?
  report discover "discover" "$status" '
    const r = out.result ?? {};
    // The profile of the release the CLI chose: /.well-known/ucp itself (2026-08-25), or the leaf it names (2026-04-08).
    if (r.profile?.ucp?.version !== env.RELEASE) return "business profile version is " + JSON.stringify(r.profile?.ucp?.version);
    if (env.RELEASE !== "2026-08-25" && r.profile?.ucp?.supported_versions) return "the leaf profile has supported_versions";
    if (r.protocol?.agentProfileUrl !== env.PROFILE_URL) return "agent profile URL is " + JSON.stringify(r.protocol?.agentProfileUrl);
    const service = r.negotiated?.["dev.ucp.shopping"];
    if (service?.endpoint !== env.BUSINESS + "/api/ucp/mcp") return "MCP endpoint is " + JSON.stringify(service?.endpoint);
    const tools = Object.keys(service.tools ?? {});
    for (const tool of ["search_catalog", "lookup_catalog", "get_product", "create_cart", "get_cart", "update_cart", "cancel_cart"]) {
      if (!tools.includes(tool)) return "tools/list lacks " + tool + " (has " + tools.join(", ") + ")";
    }
  ' "capabilities $(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(Object.keys(o.result?.profile?.ucp?.capabilities??{}).join(", "))' "$OUT/discover.json" 2>/dev/null || true)" || true

  # 3. catalog search, as the agent: the store fetches the profile and negotiates.
  status=0
  ucp search catalog search --business "$BUSINESS" --set /query=espresso || status=$?
  report search "catalog search" "$status" '
    if (out.ucp?.status !== "success") return "ucp.status is " + JSON.stringify(out.ucp?.status);
    if (out.ucp.version !== env.RELEASE) return "answered in UCP " + JSON.stringify(out.ucp.version) + ", not " + env.RELEASE;
    if (!out.ucp.capabilities?.["dev.ucp.shopping.catalog.search"]) return "the answer does not name dev.ucp.shopping.catalog.search";
    const products = out.result?.products;
    if (!Array.isArray(products) || products.length === 0) return "no products";
    if (!products[0].variants?.[0]?.id) return "the first product has no variant id";
  ' "$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const p=o.result.products;console.log(p.length+" products, first "+JSON.stringify(p[0].title))' "$OUT/search.json" 2>/dev/null || true)" || true
  VARIANT="$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(String(o.result.products[0].variants[0].id))' "$OUT/search.json" 2>/dev/null || true)"

  # 4. cart create with that variant.
  if [ -z "$VARIANT" ]; then
    fail "cart create (no variant from the search to put in it)"
  else
    export VARIANT
    status=0
    ucp cart cart create --business "$BUSINESS" --set "/line_items=[{\"item\":{\"id\":\"$VARIANT\"},\"quantity\":2}]" || status=$?
    report cart "cart create" "$status" '
      if (out.ucp?.status !== "success") return "ucp.status is " + JSON.stringify(out.ucp?.status);
      if (!out.ucp.capabilities?.["dev.ucp.shopping.cart"]) return "the answer does not name dev.ucp.shopping.cart";
      const cart = out.result ?? {};
      if (typeof cart.id !== "string" || cart.id === "") return "the cart has no id";
      const line = cart.line_items?.[0];
      if (cart.line_items?.length !== 1 || line?.item?.id !== env.VARIANT || line.quantity !== 2) return "the cart lines are " + JSON.stringify(cart.line_items);
      if (!cart.totals?.some((t) => t.type === "total" && t.amount > 0)) return "the cart has no positive total";
    ' "$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const c=o.result;console.log("cart "+c.id+", 1 line, "+c.line_items[0].quantity+" x "+c.line_items[0].item.id+", total "+c.totals.find((t)=>t.type==="total").amount+" "+c.currency)' "$OUT/cart.json" 2>/dev/null || true)" || true
  fi

  CART_ID="$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(String(o.result.id))' "$OUT/cart.json" 2>/dev/null || true)"

  # 5. checkout create from that cart, with the buyer and a US shipping address and option.
  CHECKOUT_ID=""
  if [ -z "$CART_ID" ]; then
    fail "checkout create (no cart to check out)"
  else
    status=0
    ucp checkout-create checkout create --business "$BUSINESS" --input "{\"cart_id\":\"$CART_ID\",\"line_items\":[],\"buyer\":{\"email\":\"ci@example.com\",\"first_name\":\"Casey\"},\"fulfillment\":{\"methods\":[{\"type\":\"shipping\",\"destinations\":[{\"street_address\":\"1 Main St\",\"address_locality\":\"Springfield\",\"address_region\":\"IL\",\"postal_code\":\"62701\",\"address_country\":\"US\"}],\"groups\":[{\"selected_option_id\":\"standard\"}]}]}}" || status=$?
    report checkout-create "checkout create" "$status" '
      if (out.ucp?.status !== "success") return "ucp.status is " + JSON.stringify(out.ucp?.status);
      const checkout = out.result ?? {};
      if (checkout.status !== "ready_for_complete") return "status is " + JSON.stringify(checkout.status) + ", messages " + JSON.stringify(checkout.messages);
      if (checkout.line_items?.[0]?.item?.id !== env.VARIANT || checkout.line_items[0].quantity !== 2) return "the lines are not the cart lines: " + JSON.stringify(checkout.line_items);
      if (!checkout.totals?.some((t) => t.type === "fulfillment")) return "no shipping total";
    ' "$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const c=o.result;console.log("checkout "+c.id+", "+c.status+", total "+c.totals.find((t)=>t.type==="total").amount)' "$OUT/checkout-create.json" 2>/dev/null || true)" || true
    CHECKOUT_ID="$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(String(o.result.id))' "$OUT/checkout-create.json" 2>/dev/null || true)"
  fi

  # 6. checkout update: the full writable state again, now with express shipping.
  if [ -z "$CHECKOUT_ID" ]; then
    fail "checkout update (no checkout)"
  else
    status=0
    ucp checkout-update checkout update "$CHECKOUT_ID" --business "$BUSINESS" --input "{\"line_items\":[{\"id\":\"li_1\",\"item\":{\"id\":\"$VARIANT\"},\"quantity\":2}],\"buyer\":{\"email\":\"ci@example.com\",\"first_name\":\"Casey\"},\"fulfillment\":{\"methods\":[{\"id\":\"shipping_1\",\"type\":\"shipping\",\"line_item_ids\":[\"li_1\"],\"destinations\":[{\"street_address\":\"1 Main St\",\"address_locality\":\"Springfield\",\"address_region\":\"IL\",\"postal_code\":\"62701\",\"address_country\":\"US\"}],\"groups\":[{\"id\":\"group_1\",\"selected_option_id\":\"express\"}]}]}}" || status=$?
    report checkout-update "checkout update" "$status" '
      const checkout = out.result ?? {};
      if (checkout.status !== "ready_for_complete") return "status is " + JSON.stringify(checkout.status) + ", messages " + JSON.stringify(checkout.messages);
      if (checkout.fulfillment?.methods?.[0]?.groups?.[0]?.selected_option_id !== "express") return "the express option was not selected";
    ' "express shipping selected" || true
  fi

  # 7. checkout complete, as the agent: never an order; the buyer's approval link instead. The CLI hands the link to
  #    its --on-escalation hook, which plays the buyer: it approves on the page in headless Chromium.
  if [ -z "$CHECKOUT_ID" ]; then
    fail "checkout complete (no checkout)"
  else
    status=0
    ucp checkout-complete checkout complete "$CHECKOUT_ID" --business "$BUSINESS" \
      --on-escalation "node $ROOT/conformance/approve-in-browser.mjs $OUT/escalation.json" || status=$?
    report checkout-complete "checkout complete (agent)" "$status" '
      const checkout = out.result ?? {};
      if (checkout.status !== "requires_escalation") return "status is " + JSON.stringify(checkout.status);
      if (checkout.order) return "an agent placed an order: " + JSON.stringify(checkout.order);
      if (!checkout.messages?.some((m) => m.code === "buyer_approval_required" && m.severity === "requires_buyer_review")) return "no buyer_approval_required message";
      if (!String(checkout.continue_url).startsWith(env.BUSINESS + "/checkout/approve/")) return "continue_url is " + JSON.stringify(checkout.continue_url);
    ' "requires_escalation, continue_url to the approval page" || true
    if node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); if (!r.approved) { console.log(JSON.stringify(r)); process.exit(1); }' "$OUT/escalation.json" > "$OUT/escalation.problem" 2>&1; then
      pass "the --on-escalation hook opened continue_url in Chromium and the buyer approved"
    else
      fail "the buyer's approval in Chromium: $(head -c 800 "$OUT/escalation.problem" 2>/dev/null || echo 'the hook did not run')"
    fi

    # 8. after the buyer's approval: checkout get answers completed with the order, and order get answers it.
    status=0
    ucp checkout-get checkout get "$CHECKOUT_ID" --business "$BUSINESS" || status=$?
    report checkout-get "checkout get (after the approval)" "$status" '
      const checkout = out.result ?? {};
      if (checkout.status !== "completed") return "status is " + JSON.stringify(checkout.status);
      if (!/\/orders\/ord_/.test(String(checkout.order?.permalink_url))) return "order is " + JSON.stringify(checkout.order);
    ' "completed" || true
    ORDER_ID="$(node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(String(o.result.order.id))' "$OUT/checkout-get.json" 2>/dev/null || true)"
    if [ -z "$ORDER_ID" ]; then
      fail "order get (no order id)"
    else
      export CHECKOUT_ID
      status=0
      ucp order-get order get "$ORDER_ID" --business "$BUSINESS" || status=$?
      report order-get "order get" "$status" '
        const order = out.result ?? {};
        if (order.checkout_id !== env.CHECKOUT_ID) return "checkout_id is " + JSON.stringify(order.checkout_id);
        if (order.line_items?.[0]?.quantity?.total !== 2) return "the lines are " + JSON.stringify(order.line_items);
      ' "$ORDER_ID" || true
    fi
  fi

  # The agent profile was used: the store fetched it (once; then from its cache).
  fetches="$(grep -c "^GET /$NAME/profile.json" "$WORK/profile-hits.log" || true)"
  if [ "${fetches:-0}" -ge 1 ]; then
    pass "the store fetched the agent profile ($fetches time(s))"
  else
    fail "the store never fetched the agent profile"
  fi
}

# With the CLI's default profile (UCP 2026-08-25: /.well-known/ucp itself), then with a 2026-04-08 one (the CLI
# follows supported_versions to the store's 2026-04-08 leaf profile and the store answers in 2026-04-08).
flow 2026-08-25 storefront-ci-latest
flow 2026-04-08 storefront-ci-2026-04-08 --version 2026-04-08

if [ "$failures" -ne 0 ]; then
  echo "ucp-cli: FAILED ($failures failure(s)) with $CLI_PACKAGE" >&2
  echo "--- server log ---" >&2
  cat "$WORK/server.log" >&2
  exit 1
fi
echo "ucp-cli: passed ($CLI_PACKAGE, with UCP 2026-08-25 and 2026-04-08 agent profiles: profile init, discover, catalog search, cart create, checkout create, update, complete, the buyer approving in Chromium, checkout get, order get)"
