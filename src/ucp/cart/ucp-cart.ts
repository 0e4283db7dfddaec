/**
 * The domain's priced cart -> UCP Cart (shopping/cart.json, 2026-04-08). One cart model: the UCP cart id is
 * the cart token, its line ids are the line keys, and `continue_url` hands the cart over to the browser that opens
 * it (/cart/c/{token}: a new token there, and this id names no cart). Amounts are the cart's integer cents; totals follow the UCP totals contract (subtotal
 * before the selling-plan discount, the discount negative, then the total).
 */
import type { PricedCart } from '../../cart/cart.js';
import { absoluteUrl, planTermsOf, STORE_CURRENCY } from '../../catalog/types.js';
import { lineTitle } from '../checkout/ucp-checkout.js';

export interface UcpTotal {
  type: 'subtotal' | 'items_discount' | 'total';
  amount: number;
  display_text?: string;
}

export interface UcpCartLine {
  id: string;
  item: { id: string; title: string; price: number; image_url?: string };
  quantity: number;
  totals: UcpTotal[];
}

export interface UcpCart {
  id: string;
  line_items: UcpCartLine[];
  currency: string;
  totals: UcpTotal[];
  continue_url: string;
}

export function cartContinueUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/cart/c/${token}`;
}

function totals(subtotal: number, discount: number, total: number): UcpTotal[] {
  return [
    { type: 'subtotal', amount: subtotal },
    ...(discount > 0 ? [{ type: 'items_discount' as const, amount: -discount, display_text: 'Subscription savings' }] : []),
    { type: 'total', amount: total },
  ];
}

export function ucpCart(cart: PricedCart, baseUrl: string): UcpCart {
  return {
    id: cart.token,
    line_items: cart.lines.map((priced) => {
      const image = priced.item.product.images[0];
      return {
        id: priced.line.key,
        item: {
          id: String(priced.item.variant.id),
          // A line bought on a selling plan names its plan, as the checkout's and the order's lines do.
          title: lineTitle(priced.title, priced.sellingPlan && planTermsOf(priced.sellingPlan.group, priced.sellingPlan.plan)),
          price: priced.price,
          ...(image ? { image_url: absoluteUrl(baseUrl, image.src) } : {}),
        },
        quantity: priced.line.quantity,
        totals: totals(priced.originalLinePrice, priced.discount, priced.linePrice),
      };
    }),
    currency: STORE_CURRENCY,
    totals: totals(cart.totals.originalTotalPrice, cart.totals.totalDiscount, cart.totals.totalPrice),
    continue_url: cartContinueUrl(baseUrl, cart.token),
  };
}
