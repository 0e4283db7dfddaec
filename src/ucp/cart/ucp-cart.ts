/**
 * The storefront Cart (what /cart.js shows) -> UCP Cart (shopping/cart.json, 2026-04-08). One cart model:
 * the UCP cart id is the cart token, its line ids are the line keys, and `continue_url` opens the same cart
 * in a browser (/cart/c/{token}). Amounts are the cart's own integer cents; totals follow the UCP totals
 * contract (subtotal before the selling-plan discount, the discount negative, then the total).
 */
import type { CartJson } from '../../cart/schemas.js';
import { UCP_VERSION } from '../protocol.js';

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

export function ucpCart(cart: CartJson, baseUrl: string): UcpCart {
  return {
    id: cart.token,
    line_items: cart.items.map((line) => ({
      id: line.key,
      item: { id: String(line.id), title: line.title, price: line.price, ...(line.image ? { image_url: line.image } : {}) },
      quantity: line.quantity,
      totals: totals(line.original_line_price, line.total_discount, line.line_price),
    })),
    currency: cart.currency,
    totals: totals(cart.original_total_price, cart.total_discount, cart.total_price),
    continue_url: cartContinueUrl(baseUrl, cart.token),
  };
}

/** The `ucp` member of a cart response (response_cart_schema: no payment handlers before checkout). */
export function cartEnvelope(version: string): { version: string; status: 'success'; capabilities: Record<string, { version: string }[]> } {
  return { version: UCP_VERSION, status: 'success', capabilities: { 'dev.ucp.shopping.cart': [{ version }] } };
}
