/** The db room's pure parts (tasks/db/): exact decimals for money, and what Django would write. */
import { PyDateTime, PyDecimal, PyUUID } from '../../lib/protocol/values.js';
import { Dec, DecimalError } from '../../tasks/db/decimal.js';
import { djangoJson, recordLocator } from '../../tasks/db/django.js';

describe('Dec: exact decimals for money', () => {
  test.each([
    ['0.1', '0.2', '0.3'],
    ['2.50', '0.00000001', '2.50000001'],
    ['-1.5', '1', '-0.5'],
    ['1e3', '0.5', '1000.5'],
  ])('%s + %s = %s, with no float rounding', (a, b, sum) => {
    expect(Dec.of(a).add(Dec.of(b)).toString()).toBe(sum);
  });

  test.each([
    ['0.125', 2, '0.12'],
    ['0.135', 2, '0.14'],
    ['-0.125', 2, '-0.12'],
    ['2.5', 0, '2'],
    ['3.5', 0, '4'],
    ['1.2', 4, '1.2000'],
  ])('quantize(%s, %i) rounds half-even like Django: %s', (v, places, out) => {
    expect(Dec.of(v).quantize(places).toString()).toBe(out);
  });

  test('a kombu Decimal marker, a string and a number all give the same amount', () => {
    expect(Dec.of(new PyDecimal('2.50')).cmp(Dec.of('2.5'))).toBe(0);
    expect(Dec.of(0.1).toString()).toBe('0.1');
  });

  test('price per million tokens × tokens is exact', () => {
    expect(Dec.of('2.5').mul(Dec.of(200000)).shift(6).quantize(8).toString()).toBe('0.50000000');
    expect(Dec.of('0.000001').mul(Dec.of(1)).shift(6).quantize(8).toString()).toBe('0.00000000');
  });

  test.each(['abc', '', '1.2.3', 'NaN'])('rejects %j with a typed error', (v) => {
    expect(() => Dec.of(v)).toThrow(DecimalError);
    expect(() => Dec.of(v)).toThrow(/not a decimal/);
  });
});

describe('what Django would write', () => {
  test('record locators match TimestampedModel.record_locator', () => {
    // base64url("1000123") = "MTAwMDEyMw"
    expect(recordLocator('LLMHostCompute', 123)).toBe('llmhostcompute-rMTAwMDEyMwx');
  });

  test('JSONField text is json.dumps with DjangoJSONEncoder: Python separators, ASCII, ISO datetimes with ms and Z', () => {
    const value = {
      role: 'user',
      content: 'café',
      cost: new PyDecimal('1.10'),
      at: new PyDateTime('2026-01-02T03:04:05.678901+00:00'),
      id: new PyUUID('12345678-1234-5678-1234-567812345678'),
      list: [1, null, true],
    };
    expect(djangoJson(value)).toBe(
      '{"role": "user", "content": "caf\\u00e9", "cost": "1.10", "at": "2026-01-02T03:04:05.678Z", "id": "12345678-1234-5678-1234-567812345678", "list": [1, null, true]}',
    );
    expect(djangoJson(null)).toBeNull();
  });
});
