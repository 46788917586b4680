// The protobuf messages of the shippers' protocols, as protobufjs descriptors: OTLP's logs export request and answer
// (opentelemetry-proto collector/logs/v1, logs/v1, common/v1, resource/v1), google.rpc.Status (the body of OTLP's
// refusals), and Loki's push request (logproto, pkg/push/push.proto). Field numbers and types are the protocols';
// only the messages and fields Quarry reads or writes are declared (protobuf skips the others on decode).
// Decoding and encoding are protobufjs's (its generated code per type); nothing here reads the wire by hand except
// counting records before a decode (countNested), which uses protobufjs's own Reader.
// protobufjs and the types are loaded at the first use, not at the start: together about 250 ms of import and setup
// (test/lazy-imports.test.ts checks a start loads none of it).
import type * as Protobuf from 'protobufjs/light.js'

const OTLP = {
  nested: {
    opentelemetry: {
      nested: {
        proto: {
          nested: {
            common: {
              nested: {
                v1: {
                  nested: {
                    AnyValue: {
                      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
                      fields: {
                        stringValue: { type: 'string', id: 1 },
                        boolValue: { type: 'bool', id: 2 },
                        intValue: { type: 'int64', id: 3 },
                        doubleValue: { type: 'double', id: 4 },
                        arrayValue: { type: 'ArrayValue', id: 5 },
                        kvlistValue: { type: 'KeyValueList', id: 6 },
                        bytesValue: { type: 'bytes', id: 7 },
                      },
                    },
                    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
                    KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
                    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
                    InstrumentationScope: {
                      fields: {
                        name: { type: 'string', id: 1 },
                        version: { type: 'string', id: 2 },
                        attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
                      },
                    },
                  },
                },
              },
            },
            resource: {
              nested: {
                v1: {
                  nested: {
                    Resource: { fields: { attributes: { rule: 'repeated', type: 'opentelemetry.proto.common.v1.KeyValue', id: 1 } } },
                  },
                },
              },
            },
            logs: {
              nested: {
                v1: {
                  nested: {
                    ResourceLogs: {
                      fields: {
                        resource: { type: 'opentelemetry.proto.resource.v1.Resource', id: 1 },
                        scopeLogs: { rule: 'repeated', type: 'ScopeLogs', id: 2 },
                      },
                    },
                    ScopeLogs: {
                      fields: {
                        scope: { type: 'opentelemetry.proto.common.v1.InstrumentationScope', id: 1 },
                        logRecords: { rule: 'repeated', type: 'LogRecord', id: 2 },
                      },
                    },
                    LogRecord: {
                      fields: {
                        timeUnixNano: { type: 'fixed64', id: 1 },
                        observedTimeUnixNano: { type: 'fixed64', id: 11 },
                        severityNumber: { type: 'int32', id: 2 },
                        severityText: { type: 'string', id: 3 },
                        body: { type: 'opentelemetry.proto.common.v1.AnyValue', id: 5 },
                        attributes: { rule: 'repeated', type: 'opentelemetry.proto.common.v1.KeyValue', id: 6 },
                        flags: { type: 'fixed32', id: 8 },
                        traceId: { type: 'bytes', id: 9 },
                        spanId: { type: 'bytes', id: 10 },
                        eventName: { type: 'string', id: 12 },
                      },
                    },
                  },
                },
              },
            },
            collector: {
              nested: {
                logs: {
                  nested: {
                    v1: {
                      nested: {
                        ExportLogsServiceRequest: { fields: { resourceLogs: { rule: 'repeated', type: 'opentelemetry.proto.logs.v1.ResourceLogs', id: 1 } } },
                        ExportLogsServiceResponse: { fields: { partialSuccess: { type: 'ExportLogsPartialSuccess', id: 1 } } },
                        ExportLogsPartialSuccess: {
                          fields: { rejectedLogRecords: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    google: {
      nested: {
        rpc: {
          nested: {
            Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } },
          },
        },
        protobuf: {
          nested: {
            Timestamp: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
      },
    },
    logproto: {
      nested: {
        PushRequest: { fields: { streams: { rule: 'repeated', type: 'StreamAdapter', id: 1 } } },
        StreamAdapter: { fields: { labels: { type: 'string', id: 1 }, entries: { rule: 'repeated', type: 'EntryAdapter', id: 2 } } },
        EntryAdapter: {
          fields: {
            timestamp: { type: 'google.protobuf.Timestamp', id: 1 },
            line: { type: 'string', id: 2 },
            structuredMetadata: { rule: 'repeated', type: 'LabelPairAdapter', id: 3 },
          },
        },
        LabelPairAdapter: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
      },
    },
  },
}

interface Messages {
  ExportLogsServiceRequest: Protobuf.Type
  ExportLogsServiceResponse: Protobuf.Type
  RpcStatus: Protobuf.Type
  PushRequest: Protobuf.Type
  Reader: typeof Protobuf.Reader
}

let messages: Messages | undefined

/** The message types (and protobufjs's Reader), built at the first call. */
export function protobufMessages(): Messages {
  if (messages) return messages
  const protobuf = require('protobufjs/light.js') as typeof Protobuf
  const root = protobuf.Root.fromJSON(OTLP)
  return (messages = {
    ExportLogsServiceRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    ExportLogsServiceResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    RpcStatus: root.lookupType('google.rpc.Status'),
    PushRequest: root.lookupType('logproto.PushRequest'),
    Reader: protobuf.Reader,
  })
}

/** A 64-bit integer as protobufjs decodes it (a Long, or a number when it fits). */
export interface Int64 {
  low: number
  high: number
  unsigned?: boolean
}

export interface PbAnyValue {
  stringValue?: string
  boolValue?: boolean
  intValue?: Int64 | number
  doubleValue?: number
  arrayValue?: { values?: PbAnyValue[] }
  kvlistValue?: { values?: PbKeyValue[] }
  bytesValue?: Uint8Array
  value?: string
}
export interface PbKeyValue {
  key?: string
  value?: PbAnyValue | null
}
export interface PbLogRecord {
  timeUnixNano?: Int64 | number
  observedTimeUnixNano?: Int64 | number
  severityNumber?: number
  severityText?: string
  body?: PbAnyValue | null
  attributes?: PbKeyValue[]
  traceId?: Uint8Array
  spanId?: Uint8Array
  eventName?: string
}
export interface PbExportLogsRequest {
  resourceLogs?: {
    resource?: { attributes?: PbKeyValue[] } | null
    scopeLogs?: { scope?: { name?: string; version?: string } | null; logRecords?: PbLogRecord[] }[]
  }[]
}
export interface PbPushRequest {
  streams?: {
    labels?: string
    entries?: { timestamp?: { seconds?: Int64 | number; nanos?: number } | null; line?: string; structuredMetadata?: { name?: string; value?: string }[] }[]
  }[]
}

/** Wire type 2: a length-delimited field (a message, a string, bytes). */
const LENGTH_DELIMITED = 2

/**
 * How many fields are at the end of `path` (field numbers, each a length-delimited field of the message before it)
 * in the message `bytes`, counted without decoding anything else, and stopping past `max` (then max + 1 is
 * answered). So a request of millions of tiny records is refused before protobufjs builds an object for each.
 * Throws (protobufjs's RangeError or Error) on a malformed message, as the decode would.
 */
export function countNested(bytes: Uint8Array, path: readonly number[], max: number): number {
  let count = 0
  const walk = (reader: Protobuf.Reader, end: number, depth: number): void => {
    while (reader.pos < end && count <= max) {
      const tag = reader.uint32()
      const field = tag >>> 3
      const wire = tag & 7
      if (field === path[depth] && wire === LENGTH_DELIMITED) {
        const length = reader.uint32()
        const stop = reader.pos + length
        if (stop > end) throw new RangeError(`index out of range: ${stop} > ${end}`)
        if (depth === path.length - 1) {
          count++
          reader.pos = stop
        } else {
          walk(reader, stop, depth + 1)
          reader.pos = stop
        }
      } else {
        reader.skipType(wire)
      }
    }
    if (reader.pos > end) throw new RangeError(`index out of range: ${reader.pos} > ${end}`)
  }
  walk(protobufMessages().Reader.create(bytes), bytes.byteLength, 0)
  return count
}
