/**
 * The browser checkout, one page: the cart's lines and totals, then a form for the email, the US shipping address
 * and the shipping method, posted to /checkout. What the checkout still misses or refuses is said beside its field
 * (and listed at the top, linking to each field); the values typed are kept. Continuing leads to the approval page,
 * the same one an agent's checkout sends the buyer to.
 */
import type { PricedCart } from '../../cart/cart.js';
import { planTermsOf } from '../../catalog/types.js';
import type { CheckoutMessage } from '../../checkout/checkout.js';
import type { FieldPath } from '../../checkout/fields.js';
import type { Refusal } from '../../checkout/machine.js';
import { US_REGIONS, type ShippingOption } from '../../checkout/shipping.js';
import type { CheckoutTotals } from '../../checkout/totals.js';
import { PERSON_FIELDS } from '../../fields/person-fields.js';
import { planSavingWords } from '../../mail/mail-parts.js';
import { buyerNotes, withPlanWords } from './approval-page.js';
import { CART_PATH, CHECKOUT_PATH, lineDetails, variantTitleOf } from './cart-page.js';
import { buyerSentence } from './checkout-sentences.js';
import { html, type Html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { formatMoney, linesTable, productThumbnail, totalsList, type DisplayLine } from './purchase-parts.js';

/** The form's fields: the name each is posted under, and the most characters it takes (the field's rule's). */
export const CHECKOUT_FIELDS = {
  email: { name: 'email', max: PERSON_FIELDS.email.max },
  firstName: { name: 'first_name', max: PERSON_FIELDS.firstName.max },
  lastName: { name: 'last_name', max: PERSON_FIELDS.lastName.max },
  streetAddress: { name: 'street_address', max: PERSON_FIELDS.streetAddress.max },
  extendedAddress: { name: 'extended_address', max: PERSON_FIELDS.extendedAddress.max },
  locality: { name: 'city', max: PERSON_FIELDS.locality.max },
  region: { name: 'state', max: PERSON_FIELDS.region.max },
  postalCode: { name: 'zip', max: PERSON_FIELDS.postalCode.max },
  phoneNumber: { name: 'phone', max: PERSON_FIELDS.phoneNumber.max },
  shippingOption: { name: 'shipping_option', max: PERSON_FIELDS.shippingOption.max },
} as const;

export type CheckoutField = keyof typeof CHECKOUT_FIELDS;
export type CheckoutFormValues = Record<CheckoutField, string>;

export const EMPTY_CHECKOUT_FORM: CheckoutFormValues = {
  email: '',
  firstName: '',
  lastName: '',
  streetAddress: '',
  extendedAddress: '',
  locality: '',
  region: '',
  postalCode: '',
  phoneNumber: '',
  shippingOption: '',
};

/** Something to fix, in the buyer's words; `field`: the form field it belongs beside (none: the cart or the checkout). */
export interface CheckoutProblem {
  field: CheckoutField | undefined;
  text: Html | string;
}

export interface BrowserCheckoutFacts {
  /** The order as it stands: its lines and totals. */
  lines: readonly DisplayLine[];
  totals: CheckoutTotals;
  options: readonly ShippingOption[];
  values: CheckoutFormValues;
  problems: readonly CheckoutProblem[];
  /** The approval page of this checkout while one is waiting for the buyer. */
  pendingApproval?: string;
  /** The cart's note and attributes (cart/update.js), which the order keeps. */
  note?: string | null;
  attributes?: Record<string, string>;
}

/** The field of the form a checkout fact names (in the domain's names), if the form has one. */
function formFieldOf(field: FieldPath | undefined): CheckoutField | undefined {
  if (!field) return undefined;
  if (field[0] === 'buyer') return field[1] === 'phoneNumber' ? 'phoneNumber' : 'email';
  if (field[0] === 'shippingOption') return 'shippingOption';
  if (field[0] !== 'destination') return undefined;
  const part = field[1];
  if (part === undefined) return 'streetAddress';
  return part === 'country' ? undefined : part;
}

/** The checkout's refusals as the page shows them: sentences, each beside its field. */
export function checkoutProblems(facts: readonly (Refusal | CheckoutMessage)[], options: readonly ShippingOption[]): CheckoutProblem[] {
  return facts.map((fact) => ({ field: formFieldOf(fact.field), text: buyerSentence(fact, options) }));
}

/** The cart's lines as the summary table shows them, a line on a plan saying its plan, interval and saving. */
export function cartDisplayLines(cart: PricedCart): DisplayLine[] {
  return cart.lines.map((priced) => {
    const line: DisplayLine = {
      product: priced.item.product.title,
      variant: variantTitleOf(priced),
      details: lineDetails(priced),
      quantity: priced.line.quantity,
      unitPrice: priced.price,
      lineTotal: priced.linePrice,
      image: productThumbnail(priced.item.product),
    };
    const plan = priced.sellingPlan;
    return plan ? withPlanWords(line, planSavingWords(planTermsOf(plan.group, plan.plan), priced.discount), [plan.plan.name]) : line;
  });
}

const REGION_NAMES: Record<string, string> = {
  AL: 'Alabama', AK: 'Alaska', AZ: 'Arizona', AR: 'Arkansas', CA: 'California', CO: 'Colorado', CT: 'Connecticut', DE: 'Delaware',
  FL: 'Florida', GA: 'Georgia', HI: 'Hawaii', ID: 'Idaho', IL: 'Illinois', IN: 'Indiana', IA: 'Iowa', KS: 'Kansas', KY: 'Kentucky',
  LA: 'Louisiana', ME: 'Maine', MD: 'Maryland', MA: 'Massachusetts', MI: 'Michigan', MN: 'Minnesota', MS: 'Mississippi',
  MO: 'Missouri', MT: 'Montana', NE: 'Nebraska', NV: 'Nevada', NH: 'New Hampshire', NJ: 'New Jersey', NM: 'New Mexico',
  NY: 'New York', NC: 'North Carolina', ND: 'North Dakota', OH: 'Ohio', OK: 'Oklahoma', OR: 'Oregon', PA: 'Pennsylvania',
  RI: 'Rhode Island', SC: 'South Carolina', SD: 'South Dakota', TN: 'Tennessee', TX: 'Texas', UT: 'Utah', VT: 'Vermont',
  VA: 'Virginia', WA: 'Washington', WV: 'West Virginia', WI: 'Wisconsin', WY: 'Wyoming', DC: 'District of Columbia',
  PR: 'Puerto Rico', GU: 'Guam', VI: 'U.S. Virgin Islands', AS: 'American Samoa', MP: 'Northern Mariana Islands',
};

/** The regions the store ships to, by name. */
/** The US states and territories by name (the checkout's and the subscriptions page's address forms). */
export const REGIONS = [...US_REGIONS].map((code) => ({ code, name: REGION_NAMES[code] ?? code })).sort((a, b) => a.name.localeCompare(b.name, 'en'));

const fieldId = (field: CheckoutField) => `checkout-${CHECKOUT_FIELDS[field].name.replace(/_/g, '-')}`;
const errorId = (field: CheckoutField) => `${fieldId(field)}-error`;

/** The first problem of each field. */
function problemsByField(problems: readonly CheckoutProblem[]): Map<CheckoutField, Html | string> {
  const byField = new Map<CheckoutField, Html | string>();
  for (const { field, text } of problems) if (field && !byField.has(field)) byField.set(field, text);
  return byField;
}

function fieldError(field: CheckoutField, error: Html | string | undefined): Html | string {
  return error ? html`<p class="field-error" id="${errorId(field)}"><span class="visually-hidden">Error: </span>${error}</p>` : '';
}

const invalidAttributes = (field: CheckoutField, error: Html | string | undefined): Html | string =>
  error ? html` aria-invalid="true" aria-describedby="${errorId(field)}"` : '';

interface TextFieldSpec {
  field: CheckoutField;
  label: string;
  type?: 'text' | 'email' | 'tel';
  autocomplete: string;
  required?: boolean;
  inputmode?: string;
}

function textField(spec: TextFieldSpec, values: CheckoutFormValues, errors: Map<CheckoutField, Html | string>): Html {
  const { field } = spec;
  const error = errors.get(field);
  return html`<div class="field${error ? ' field-invalid' : ''}">
<label for="${fieldId(field)}">${spec.label}</label>
${fieldError(field, error)}
<input id="${fieldId(field)}" name="${CHECKOUT_FIELDS[field].name}" type="${spec.type ?? 'text'}" autocomplete="${spec.autocomplete}" maxlength="${CHECKOUT_FIELDS[field].max}" value="${values[field]}"${spec.inputmode ? html` inputmode="${spec.inputmode}"` : ''}${spec.required ? html` required` : ''}${invalidAttributes(field, error)}>
</div>`;
}

function regionField(values: CheckoutFormValues, errors: Map<CheckoutField, Html | string>): Html {
  const error = errors.get('region');
  const chosen = values.region.trim().toUpperCase();
  return html`<div class="field${error ? ' field-invalid' : ''}">
<label for="${fieldId('region')}">State</label>
${fieldError('region', error)}
<select id="${fieldId('region')}" name="${CHECKOUT_FIELDS.region.name}" autocomplete="shipping address-level1" required${invalidAttributes('region', error)}>
<option value="">Choose a state</option>
${REGIONS.map(({ code, name }) => html`<option value="${code}"${code === chosen ? html` selected` : ''}>${name}</option>`)}
</select>
</div>`;
}

/** The options' radios: labelled with the option's title and price, the delivery time beside. */
function shippingMethod(options: readonly ShippingOption[], values: CheckoutFormValues, errors: Map<CheckoutField, Html | string>): Html {
  const error = errors.get('shippingOption');
  return html`<fieldset class="shipping-method${error ? ' field-invalid' : ''}"${error ? html` aria-describedby="${errorId('shippingOption')}"` : ''}>
<legend>Shipping method</legend>
${fieldError('shippingOption', error)}
${options.map((option, index) => {
  const id = index === 0 ? fieldId('shippingOption') : `${fieldId('shippingOption')}-${option.id}`;
  return html`<div class="shipping-option">
<input type="radio" id="${id}" name="${CHECKOUT_FIELDS.shippingOption.name}" value="${option.id}"${values.shippingOption === option.id ? html` checked` : ''} aria-describedby="${id}-about">
<label for="${id}">${option.title} — ${formatMoney(option.amount)}</label>
<span class="detail" id="${id}-about">${option.description}</span>
</div>`;
})}
</fieldset>`;
}

/** The list at the top: every problem, each linking to its field (or to the cart for a line's). */
function problemSummary(problems: readonly CheckoutProblem[]): Html | string {
  if (problems.length === 0) return '';
  return html`<div class="problem error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
<h2 id="error-summary-title">Check these details</h2>
<ul>
${problems.map(({ field, text }) =>
  field ? html`<li><a href="#${fieldId(field)}">${text}</a></li>` : html`<li>${text} <a href="${CART_PATH}">Change your cart</a></li>`,
)}
</ul>
</div>`;
}

export function browserCheckoutPage(context: PageContext, facts: BrowserCheckoutFacts): string {
  const { values, problems } = facts;
  const errors = problemsByField(problems);
  const selected = facts.options.find((option) => option.id === values.shippingOption);
  const body = html`<h1>Checkout</h1>
${problemSummary(problems)}
${
  facts.pendingApproval
    ? html`<p class="notice">This order is waiting for your approval. <a href="${facts.pendingApproval}">Review and approve it</a>, or change the details below and continue again (the earlier approval link then stops working).</p>`
    : ''
}
<section aria-labelledby="checkout-order-title">
<h2 id="checkout-order-title">Your order</h2>
${linesTable('Items', facts.lines)}
${totalsList(facts.totals, selected?.title)}
${buyerNotes(facts.note, facts.attributes, 3)}
<p><a href="${CART_PATH}">Change your cart</a></p>
</section>
<form method="post" action="${CHECKOUT_PATH}" class="checkout-form" novalidate>
<fieldset>
<legend>Contact</legend>
${textField({ field: 'email', label: 'Email', type: 'email', autocomplete: 'email', required: true }, values, errors)}
<p class="detail">We send the order confirmation here.</p>
</fieldset>
<fieldset>
<legend>Shipping address</legend>
<p class="detail">This store ships to addresses in the United States.</p>
${textField({ field: 'firstName', label: 'First name', autocomplete: 'shipping given-name' }, values, errors)}
${textField({ field: 'lastName', label: 'Last name', autocomplete: 'shipping family-name' }, values, errors)}
${textField({ field: 'streetAddress', label: 'Street address', autocomplete: 'shipping address-line1', required: true }, values, errors)}
${textField({ field: 'extendedAddress', label: 'Apartment, suite, etc. (optional)', autocomplete: 'shipping address-line2' }, values, errors)}
${textField({ field: 'locality', label: 'City', autocomplete: 'shipping address-level2', required: true }, values, errors)}
${regionField(values, errors)}
${textField({ field: 'postalCode', label: 'ZIP code', autocomplete: 'shipping postal-code', inputmode: 'numeric', required: true }, values, errors)}
${textField({ field: 'phoneNumber', label: 'Phone (optional)', type: 'tel', autocomplete: 'shipping tel' }, values, errors)}
</fieldset>
${shippingMethod(facts.options, values, errors)}
<p>Next you review the whole order and approve it. Nothing is ordered until you approve it.</p>
<div class="actions">
<button type="submit" class="primary">Continue to approval</button>
</div>
</form>`;
  return layout(context, {
    title: problems.length > 0 ? 'Error: Checkout' : 'Checkout',
    body,
    path: CHECKOUT_PATH,
    description: `Checkout at ${context.storeName}.`,
    personal: true,
    shop: true,
  });
}
