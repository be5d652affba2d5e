import { GatewayError } from '../../gateways/port';

/**
 * The client of the invoice registration portal (docs/india.md, "E-invoicing"). It speaks the portal's JSON schema
 * (document, seller, buyer, items and values as the NIC e-invoice schema names them) over the gateway sandbox's
 * portal protocol: plain JSON, no session token or payload encryption (what a real portal asks of its GSPs is not built).
 * Answers: `Status: 1` with `Data`, or `Status: 0` with `ErrorDetails`, which is a refusal (given up at once).
 */

export interface IrpRegistration {
  irn: string;
  ackNo: string;
  ackDate: Date;
  signedQr: string;
}

export type IrpCancelReason = 'duplicate' | 'data_entry_mistake' | 'order_cancelled' | 'other';

/** The portal's reason codes. */
const CANCEL_REASON_CODES: Record<IrpCancelReason, string> = {
  duplicate: '1',
  data_entry_mistake: '2',
  order_cancelled: '3',
  other: '4',
};

/** The portal's error code for a cancellation after its 24 hours. */
export const CANCEL_WINDOW_PASSED = '2270';

export class IrpRefusal extends GatewayError {
  constructor(
    readonly irpCode: string,
    message: string,
  ) {
    super('gateway_rejected', `invoice registration portal refused (${irpCode}): ${message}`);
  }
}

interface IrpAnswer<T> {
  Status: number;
  Data?: T;
  ErrorDetails?: { ErrorCode: string; ErrorMessage: string }[];
}

export class IrpClient {
  /**
   * @param baseUrl the portal's API root (IRP_URL; by default the gateway sandbox's `/irp/v1`); null: none is
   *   configured, and every call is refused.
   */
  constructor(
    private readonly baseUrl: string | null,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Registers a document (`payload`: the portal's schema, e-invoice.payload.ts). A document registered before (the
   * same supplier, type, number and year) answers its registration again, so a retried command registers once.
   * `clock`: merchant time in test mode, which the sandbox's portal takes as its own (its test clock).
   */
  async register(supplierGstin: string, payload: unknown, clock: Date | null): Promise<IrpRegistration> {
    const data = await this.call<{ Irn: string; AckNo: string | number; AckDt: string; SignedQRCode: string }>(
      'POST',
      '/einvoices',
      supplierGstin,
      payload,
      clock,
    );
    return { irn: data.Irn, ackNo: String(data.AckNo), ackDate: istTime(data.AckDt), signedQr: data.SignedQRCode };
  }

  /** Cancels an IRN (within 24 hours of its acknowledgement, the portal's rule); a cancelled one answers again. */
  async cancel(
    supplierGstin: string,
    irn: string,
    reason: IrpCancelReason,
    remark: string,
    clock: Date | null,
  ): Promise<{ cancelledAt: Date }> {
    const data = await this.call<{ Irn: string; CancelDate: string }>(
      'POST',
      `/einvoices/${encodeURIComponent(irn)}/cancel`,
      supplierGstin,
      { Irn: irn, CnlRsn: CANCEL_REASON_CODES[reason], CnlRem: remark },
      clock,
    );
    return { cancelledAt: istTime(data.CancelDate) };
  }

  private async call<T>(
    method: string,
    path: string,
    supplierGstin: string,
    body: unknown,
    clock: Date | null,
  ): Promise<T> {
    if (!this.baseUrl)
      throw new GatewayError('gateway_rejected', 'no invoice registration portal is configured (IRP_URL)');
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          gstin: supplierGstin,
          ...(clock ? { 'sandbox-clock': clock.toISOString() } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new GatewayError('gateway_unavailable', `invoice registration portal unreachable: ${String(err)}`, err);
    }
    const answer = (await res.json().catch(() => null)) as IrpAnswer<T> | null;
    if (answer?.Status === 1 && answer.Data) return answer.Data;
    const error = answer?.ErrorDetails?.[0];
    // A portal that answers with its own error refuses the document; anything else (5xx, no answer) is tried again.
    if (error && res.status < 500) throw new IrpRefusal(error.ErrorCode, error.ErrorMessage);
    throw new GatewayError('gateway_unavailable', `invoice registration portal answered ${res.status}`);
  }
}

/** The portal's times: `YYYY-MM-DD HH:mm:ss` in IST. */
function istTime(s: string): Date {
  const at = new Date(`${s.replace(' ', 'T')}+05:30`);
  if (Number.isNaN(at.getTime())) throw new GatewayError('gateway_unavailable', `portal time ${s} unreadable`);
  return at;
}
