// One level's header mutations (Envoy 1.16's HeaderParser::evaluateHeaders): the headers to
// remove go first, then each header to add, its value formatted for the request; an empty value
// adds nothing, and `append: false` replaces the header's values.

import type { HeaderMutations } from '../../config/model';
import { removeHeaders } from '../../http/message';
import { type HeaderFormatContext, type HeaderFormatter, parseHeaderFormat } from './header_format';

interface Addition {
  readonly name: string;
  readonly value: HeaderFormatter;
  readonly append: boolean;
}

export class HeaderMutator {
  private readonly remove: ReadonlySet<string>;
  private readonly add: readonly Addition[];
  /** A value it adds reads the stream's record. */
  readonly readsStreamInfo: boolean;

  /** @param mutations validated: every value parses */
  constructor(mutations: HeaderMutations) {
    this.remove = new Set(mutations.remove);
    this.add = mutations.add.map((option) => ({ name: option.name, value: parseHeaderFormat(option.value), append: option.append }));
    this.readsStreamInfo = this.add.some((addition) => addition.value.readsStreamInfo);
  }

  /** @param headers [name, value, ...], names in lower case; changed in place */
  apply(headers: string[], context: HeaderFormatContext): void {
    if (this.remove.size > 0) removeHeaders(headers, (name) => this.remove.has(name));
    for (const { name, value, append } of this.add) {
      const text = value(context);
      if (text === '') continue;
      if (!append) removeHeaders(headers, (other) => other === name);
      headers.push(name, text);
    }
  }
}
