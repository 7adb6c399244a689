/**
 * The MCP tools, written by `npm run generate` from the operations of spec/ that need a key: do not
 * edit. One per operation (scripts/generate/mcpTools.ts says how each is derived); /mcp serves them
 * (src/mcp/), each to a key whose scopes allow its operation.
 */
import type { McpTool } from '../src/contract/mcpTools';

export const mcpTools: readonly McpTool[] = [
  {
    "name": "listPets",
    "title": "List animals",
    "description": "List animals\n\nReturns at most `limit` animals in ascending `id` order, optionally only\nthose with the given `status`, or in the given `categoryId`, or both.\nWhen more animals follow, the response carries `Link: <…>; rel=\"next\"`:\nthe next page, with the same `limit`, `status` and `categoryId` and a\n`cursor`. The last page carries no `rel=\"next\"`.\nFollowing the links from the first page returns every animal once, in\n`id` order, with or without filters; animals added or removed\nduring the walk never make an earlier animal appear twice or one that\nexisted throughout go missing. A page deep in the catalogue costs what\nthe first page costs, filtered or not.\n\nEach page carries a strong `ETag`; send it back in `If-None-Match` to be\nanswered 304 (no body, not counted against the rate limit) while the\npage is unchanged.\n\nNeeds a key with the scope `pets:read`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "limit": {
          "type": "integer",
          "minimum": 1,
          "maximum": 100,
          "default": 20,
          "description": "Maximum number of animals returned. A decimal integer from 1 to 100;\nanything else (`0`, `101`, `1.5`, `1e3`, `0x10`, ` 5`) is refused with 400."
        },
        "status": {
          "type": "string",
          "description": "Only animals with this availability status. An unknown value is refused with 400.",
          "enum": [
            "available",
            "pending",
            "sold"
          ]
        },
        "categoryId": {
          "type": "integer",
          "minimum": -9007199254740991,
          "maximum": 9007199254740991,
          "description": "Only animals of this category (their `categoryId`); combinable with `status`.\nA decimal integer within ±(2^53−1); anything else is refused with 400."
        },
        "cursor": {
          "type": "string",
          "minLength": 1,
          "maxLength": 64,
          "pattern": "^[A-Za-z0-9_-]+$",
          "description": "Where the page starts: just after the last animal of the previous page.\nOpaque: take it from the previous page's `Link` header (`rel=\"next\"`),\nnever build or change one. The service signs each cursor and binds it to\nthe `status` and `categoryId` of its walk: a cursor that was altered,\ntruncated, invented or made for another filter is refused with 400.\n`limit` may change from one page to the next. Absent: the first page."
        },
        "ifNoneMatch": {
          "type": "string",
          "maxLength": 2048,
          "description": "RFC 9110 §13.1.2: the `ETag`s of representations the client holds (a comma-separated\nlist, weak `W/\"…\"` or strong, compared weakly), or `*`. When one matches the current\nrepresentation, the answer is 304 with no body. A value that is no list of entity tags\nis ignored (the full answer is given). At most 2048 characters, not counting the\nwhitespace around the value (RFC 9110 §5.5); a longer one is refused with 400."
        }
      },
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            200,
            304
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "ETag": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"[A-Za-z0-9_-]{1,62}\"$",
              "description": "A strong entity tag (RFC 9110 §8.8.3) of this representation: the body and, on a\npage, its `Link`. Send it back in `If-None-Match` to be answered 304 while it holds."
            },
            "Cache-Control": {
              "type": "string",
              "enum": [
                "private, no-cache"
              ],
              "description": "`private, no-cache`: a browser or a client may keep the answer, but must revalidate it\n(`If-None-Match`) before each use; no shared cache may keep it."
            },
            "Link": {
              "type": "string",
              "maxLength": 512,
              "pattern": "^<[^>]+>; rel=\"next\"$",
              "description": "RFC 8288: the next page of this list, `rel=\"next\"`, with the same `limit` and\n`status` and the `cursor` where it starts, as a path from the root of the\norigin the request was sent to. Absent on the last page."
            },
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "type": "array",
          "description": "A list of animals, at most `limit` (100) of them.",
          "maxItems": 100,
          "items": {
            "description": "An animal as returned, with the identifier the service assigned.",
            "allOf": [
              {
                "type": "object",
                "description": "An animal to add. Unknown properties are ignored and never stored; an\n`id` sent by the client is never used.\n",
                "required": [
                  "name",
                  "categoryId"
                ],
                "properties": {
                  "name": {
                    "type": "string",
                    "description": "The animal's name, 1 to 200 characters, no control characters.",
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
                  },
                  "categoryId": {
                    "type": "integer",
                    "description": "Identifier of the category the animal belongs to.",
                    "minimum": -9007199254740991,
                    "maximum": 9007199254740991
                  },
                  "status": {
                    "allOf": [
                      {
                        "type": "string",
                        "description": "The animal's availability status.",
                        "enum": [
                          "available",
                          "pending",
                          "sold"
                        ]
                      }
                    ],
                    "default": "available"
                  }
                }
              },
              {
                "type": "object",
                "required": [
                  "id",
                  "status"
                ],
                "properties": {
                  "status": {
                    "type": "string",
                    "description": "The animal's availability status.",
                    "enum": [
                      "available",
                      "pending",
                      "sold"
                    ]
                  },
                  "id": {
                    "type": "integer",
                    "description": "Unique identifier assigned by the service on creation.",
                    "minimum": 1,
                    "maximum": 9007199254740991
                  }
                }
              }
            ]
          }
        },
        "next": {
          "type": "object",
          "properties": {
            "limit": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100,
              "default": 20,
              "description": "Maximum number of animals returned. A decimal integer from 1 to 100;\nanything else (`0`, `101`, `1.5`, `1e3`, `0x10`, ` 5`) is refused with 400."
            },
            "status": {
              "type": "string",
              "description": "Only animals with this availability status. An unknown value is refused with 400.",
              "enum": [
                "available",
                "pending",
                "sold"
              ]
            },
            "categoryId": {
              "type": "integer",
              "minimum": -9007199254740991,
              "maximum": 9007199254740991,
              "description": "Only animals of this category (their `categoryId`); combinable with `status`.\nA decimal integer within ±(2^53−1); anything else is refused with 400."
            },
            "cursor": {
              "type": "string",
              "minLength": 1,
              "maxLength": 64,
              "pattern": "^[A-Za-z0-9_-]+$",
              "description": "Where the page starts: just after the last animal of the previous page.\nOpaque: take it from the previous page's `Link` header (`rel=\"next\"`),\nnever build or change one. The service signs each cursor and binds it to\nthe `status` and `categoryId` of its walk: a cursor that was altered,\ntruncated, invented or made for another filter is refused with 400.\n`limit` may change from one page to the next. Absent: the first page."
            },
            "ifNoneMatch": {
              "type": "string",
              "maxLength": 2048,
              "description": "RFC 9110 §13.1.2: the `ETag`s of representations the client holds (a comma-separated\nlist, weak `W/\"…\"` or strong, compared weakly), or `*`. When one matches the current\nrepresentation, the answer is 304 with no body. A value that is no list of entity tags\nis ignored (the full answer is given). At most 2048 characters, not counting the\nwhitespace around the value (RFC 9110 §5.5); a longer one is refused with 400."
            }
          },
          "additionalProperties": false,
          "description": "This tool's arguments for the next page; absent on the last page."
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "List animals",
      "readOnlyHint": true,
      "destructiveHint": false,
      "idempotentHint": true,
      "openWorldHint": false
    },
    "call": {
      "method": "GET",
      "path": "/v1/pets",
      "arguments": [
        {
          "argument": "limit",
          "in": "query",
          "name": "limit"
        },
        {
          "argument": "status",
          "in": "query",
          "name": "status"
        },
        {
          "argument": "categoryId",
          "in": "query",
          "name": "categoryId"
        },
        {
          "argument": "cursor",
          "in": "query",
          "name": "cursor"
        },
        {
          "argument": "ifNoneMatch",
          "in": "header",
          "name": "If-None-Match"
        }
      ],
      "successes": [
        200,
        304
      ],
      "pages": true
    },
    "scopes": [
      [
        "pets:read"
      ]
    ]
  },
  {
    "name": "createPet",
    "title": "Add an animal",
    "description": "Add an animal\n\nAdds an animal and returns it with the `id` the service assigned.\n`name` and `categoryId` are required. An animal created without `status`\nis stored and returned as `available`.\n\nNeeds a key with the scope `pets:write`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "idempotencyKey": {
          "type": "string",
          "minLength": 1,
          "maxLength": 255,
          "pattern": "^[\\x20-\\x7E]+$",
          "description": "Makes the create safe to retry (IETF httpapi \"The Idempotency-Key HTTP Header\nField\" draft). A retry with the same key and the same body, from the same client,\ngets the first response again instead of adding a second animal; the same key\nwith a different body gets 422; a retry while the first request is still being\nprocessed gets 409. Keys are remembered for 24 hours by default and are scoped\nto the client: any of its API keys (a rotated key's successor too) replays them.\nThe value is 1 to 255 printable ASCII characters, for example a UUID; the\ndraft's quoted form (`\"…\"`) is accepted too."
        },
        "body": {
          "type": "object",
          "description": "The request body, a JSON value as the operation takes it.",
          "required": [
            "name",
            "categoryId"
          ],
          "properties": {
            "name": {
              "type": "string",
              "description": "The animal's name, 1 to 200 characters, no control characters.",
              "minLength": 1,
              "maxLength": 200,
              "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
            },
            "categoryId": {
              "type": "integer",
              "description": "Identifier of the category the animal belongs to.",
              "minimum": -9007199254740991,
              "maximum": 9007199254740991
            },
            "status": {
              "allOf": [
                {
                  "type": "string",
                  "description": "The animal's availability status.",
                  "enum": [
                    "available",
                    "pending",
                    "sold"
                  ]
                }
              ],
              "default": "available"
            }
          }
        }
      },
      "required": [
        "body"
      ],
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            201
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "Idempotent-Replayed": {
              "type": "string",
              "enum": [
                "true"
              ],
              "description": "`true` when this is the stored response to an earlier request with the same Idempotency-Key."
            },
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "description": "An animal as returned, with the identifier the service assigned.",
          "allOf": [
            {
              "type": "object",
              "description": "An animal to add. Unknown properties are ignored and never stored; an\n`id` sent by the client is never used.\n",
              "required": [
                "name",
                "categoryId"
              ],
              "properties": {
                "name": {
                  "type": "string",
                  "description": "The animal's name, 1 to 200 characters, no control characters.",
                  "minLength": 1,
                  "maxLength": 200,
                  "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
                },
                "categoryId": {
                  "type": "integer",
                  "description": "Identifier of the category the animal belongs to.",
                  "minimum": -9007199254740991,
                  "maximum": 9007199254740991
                },
                "status": {
                  "allOf": [
                    {
                      "type": "string",
                      "description": "The animal's availability status.",
                      "enum": [
                        "available",
                        "pending",
                        "sold"
                      ]
                    }
                  ],
                  "default": "available"
                }
              }
            },
            {
              "type": "object",
              "required": [
                "id",
                "status"
              ],
              "properties": {
                "status": {
                  "type": "string",
                  "description": "The animal's availability status.",
                  "enum": [
                    "available",
                    "pending",
                    "sold"
                  ]
                },
                "id": {
                  "type": "integer",
                  "description": "Unique identifier assigned by the service on creation.",
                  "minimum": 1,
                  "maximum": 9007199254740991
                }
              }
            }
          ]
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "Add an animal",
      "readOnlyHint": false,
      "destructiveHint": false,
      "idempotentHint": false,
      "openWorldHint": false
    },
    "call": {
      "method": "POST",
      "path": "/v1/pets",
      "arguments": [
        {
          "argument": "idempotencyKey",
          "in": "header",
          "name": "Idempotency-Key"
        }
      ],
      "body": "body",
      "successes": [
        201
      ],
      "pages": false
    },
    "scopes": [
      [
        "pets:write"
      ]
    ]
  },
  {
    "name": "getPet",
    "title": "Fetch one animal (deprecated)",
    "description": "Deprecated since 2026-11-22, removed on 2030-12-05: use the tool listPets instead.\n\nFetch one animal (deprecated)\n\nReturns one animal.\n\n**Deprecated**: this operation is to be removed on 5 December 2030. Use\n`GET /pets` with the `status` filter instead (and `categoryId`, to narrow it to a\ncategory). Every response of this\noperation carries the `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and\n`Link` headers: `rel=\"successor-version\"` (the operation to use instead)\nand `rel=\"deprecation\"` (RFC 9745 §3: this page, on the service's reference).\n\nThe animal carries a strong `ETag`; send it back in `If-None-Match` to be\nanswered 304 (no body, not counted against the rate limit) while it is unchanged.\n\nNeeds a key with the scope `pets:read`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "petId": {
          "type": "integer",
          "minimum": 1,
          "maximum": 9007199254740991,
          "description": "The animal's identifier, a positive decimal integer; anything else is refused with 400."
        },
        "ifNoneMatch": {
          "type": "string",
          "maxLength": 2048,
          "description": "RFC 9110 §13.1.2: the `ETag`s of representations the client holds (a comma-separated\nlist, weak `W/\"…\"` or strong, compared weakly), or `*`. When one matches the current\nrepresentation, the answer is 304 with no body. A value that is no list of entity tags\nis ignored (the full answer is given). At most 2048 characters, not counting the\nwhitespace around the value (RFC 9110 §5.5); a longer one is refused with 400."
        }
      },
      "required": [
        "petId"
      ],
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            200,
            304
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "ETag": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"[A-Za-z0-9_-]{1,62}\"$",
              "description": "A strong entity tag (RFC 9110 §8.8.3) of this representation: the body and, on a\npage, its `Link`. Send it back in `If-None-Match` to be answered 304 while it holds."
            },
            "Cache-Control": {
              "type": "string",
              "enum": [
                "private, no-cache"
              ],
              "description": "`private, no-cache`: a browser or a client may keep the answer, but must revalidate it\n(`If-None-Match`) before each use; no shared cache may keep it."
            },
            "Deprecation": {
              "type": "string",
              "maxLength": 24,
              "pattern": "^@-?[0-9]+$",
              "description": "RFC 9745: the date from which the operation is deprecated, as `@<epoch seconds>`."
            },
            "Sunset": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "RFC 8594: the date on which the operation is removed, as an HTTP date."
            },
            "Link": {
              "type": "string",
              "maxLength": 512,
              "pattern": "^<[^>]+>; rel=\"successor-version\"(, <[^>]+>; rel=\"deprecation\")?$",
              "description": "The replacement operation, `rel=\"successor-version\"`, and the operation's\npage on the service's reference (`/docs/`), which says how to migrate,\n`rel=\"deprecation\"` (RFC 9745 §3)."
            },
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "description": "An animal as returned, with the identifier the service assigned.",
          "allOf": [
            {
              "type": "object",
              "description": "An animal to add. Unknown properties are ignored and never stored; an\n`id` sent by the client is never used.\n",
              "required": [
                "name",
                "categoryId"
              ],
              "properties": {
                "name": {
                  "type": "string",
                  "description": "The animal's name, 1 to 200 characters, no control characters.",
                  "minLength": 1,
                  "maxLength": 200,
                  "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
                },
                "categoryId": {
                  "type": "integer",
                  "description": "Identifier of the category the animal belongs to.",
                  "minimum": -9007199254740991,
                  "maximum": 9007199254740991
                },
                "status": {
                  "allOf": [
                    {
                      "type": "string",
                      "description": "The animal's availability status.",
                      "enum": [
                        "available",
                        "pending",
                        "sold"
                      ]
                    }
                  ],
                  "default": "available"
                }
              }
            },
            {
              "type": "object",
              "required": [
                "id",
                "status"
              ],
              "properties": {
                "status": {
                  "type": "string",
                  "description": "The animal's availability status.",
                  "enum": [
                    "available",
                    "pending",
                    "sold"
                  ]
                },
                "id": {
                  "type": "integer",
                  "description": "Unique identifier assigned by the service on creation.",
                  "minimum": 1,
                  "maximum": 9007199254740991
                }
              }
            }
          ]
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "Fetch one animal (deprecated)",
      "readOnlyHint": true,
      "destructiveHint": false,
      "idempotentHint": true,
      "openWorldHint": false
    },
    "call": {
      "method": "GET",
      "path": "/v1/pets/{petId}",
      "arguments": [
        {
          "argument": "petId",
          "in": "path",
          "name": "petId"
        },
        {
          "argument": "ifNoneMatch",
          "in": "header",
          "name": "If-None-Match"
        }
      ],
      "successes": [
        200,
        304
      ],
      "pages": false
    },
    "scopes": [
      [
        "pets:read"
      ]
    ]
  },
  {
    "name": "listWebhookEndpoints",
    "title": "List your webhook endpoints",
    "description": "List your webhook endpoints\n\nThe webhook endpoints of the API key's client (every key of the client sees the\nsame ones; no client sees another's), oldest first: at most 20, so one page holds\nthem all. Secrets are never shown here.\n\nNeeds a key with the scope `webhooks:manage`.",
    "inputSchema": {
      "type": "object",
      "properties": {},
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            200
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "type": "array",
          "description": "A client's webhook endpoints, at most 20.",
          "maxItems": 20,
          "items": {
            "type": "object",
            "description": "A webhook endpoint as its owner sees it; never its secret.",
            "required": [
              "id",
              "url",
              "events",
              "status",
              "createdAt"
            ],
            "properties": {
              "id": {
                "type": "string",
                "description": "The endpoint's identifier.",
                "pattern": "^we_[0-9A-Za-z]{16}$",
                "maxLength": 19
              },
              "url": {
                "type": "string",
                "format": "uri",
                "description": "Where events are POSTed.",
                "maxLength": 2048
              },
              "events": {
                "type": "array",
                "description": "The events sent to it.",
                "maxItems": 10,
                "items": {
                  "type": "string",
                  "description": "An event a webhook endpoint can subscribe to; `pet.created` is the `petCreated` webhook.",
                  "enum": [
                    "pet.created"
                  ]
                }
              },
              "description": {
                "type": "string",
                "description": "What the endpoint is for.",
                "maxLength": 500,
                "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
              },
              "status": {
                "type": "string",
                "description": "`enabled`, deliveries are made; `disabled`, none is (deliveries waiting resume if it\nis enabled again within their 3 days), and `disabledReason` says why.\n",
                "enum": [
                  "enabled",
                  "disabled"
                ]
              },
              "disabledReason": {
                "type": "string",
                "description": "Why the endpoint is disabled (every delivery failed for 3 days; or an operator disabled it).",
                "maxLength": 1000
              },
              "createdAt": {
                "type": "string",
                "format": "date-time",
                "description": "When it was created.",
                "maxLength": 32
              }
            }
          }
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "List your webhook endpoints",
      "readOnlyHint": true,
      "destructiveHint": false,
      "idempotentHint": true,
      "openWorldHint": false
    },
    "call": {
      "method": "GET",
      "path": "/v1/webhook-endpoints",
      "arguments": [],
      "successes": [
        200
      ],
      "pages": false
    },
    "scopes": [
      [
        "webhooks:manage"
      ]
    ]
  },
  {
    "name": "createWebhookEndpoint",
    "title": "Subscribe an endpoint to events",
    "description": "Subscribe an endpoint to events\n\nRegisters a URL to which the service POSTs each event named in `events` (the\n`petCreated` webhook of this document), signed as Standard Webhooks signs: the\n`webhook-id`, `webhook-timestamp` and `webhook-signature` headers. The answer holds\nthe endpoint's signing `secret` (`whsec_…`): it is shown here and at rotation,\nnever again.\n\nThe URL is `https` (`http` only where the operator set\n`WEBHOOK_ALLOW_PRIVATE_TARGETS=true`, for local development), without user\ninformation or a fragment, and names no loopback, private, link-local or\ncloud-metadata address; a name is checked again on the address each delivery\nconnects to. A client has at most 20 endpoints: a 21st is refused with 400.\n\nNeeds a key with the scope `webhooks:manage`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "body": {
          "type": "object",
          "description": "The request body, a JSON value as the operation takes it.",
          "required": [
            "url",
            "events"
          ],
          "properties": {
            "url": {
              "type": "string",
              "format": "uri",
              "description": "Where events are POSTed: an absolute `https` URL of at most 2048 characters, naming\nno loopback, private, link-local or cloud-metadata address.\n",
              "minLength": 1,
              "maxLength": 2048
            },
            "events": {
              "type": "array",
              "description": "The events to send to it, each once.",
              "minItems": 1,
              "maxItems": 10,
              "uniqueItems": true,
              "items": {
                "type": "string",
                "description": "An event a webhook endpoint can subscribe to; `pet.created` is the `petCreated` webhook.",
                "enum": [
                  "pet.created"
                ]
              }
            },
            "description": {
              "type": "string",
              "description": "What the endpoint is for, for its owner; at most 500 characters, no control characters.",
              "maxLength": 500,
              "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
            }
          }
        }
      },
      "required": [
        "body"
      ],
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            201
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "description": "A new endpoint and its signing secret, shown this once.",
          "allOf": [
            {
              "type": "object",
              "description": "A webhook endpoint as its owner sees it; never its secret.",
              "required": [
                "id",
                "url",
                "events",
                "status",
                "createdAt"
              ],
              "properties": {
                "id": {
                  "type": "string",
                  "description": "The endpoint's identifier.",
                  "pattern": "^we_[0-9A-Za-z]{16}$",
                  "maxLength": 19
                },
                "url": {
                  "type": "string",
                  "format": "uri",
                  "description": "Where events are POSTed.",
                  "maxLength": 2048
                },
                "events": {
                  "type": "array",
                  "description": "The events sent to it.",
                  "maxItems": 10,
                  "items": {
                    "type": "string",
                    "description": "An event a webhook endpoint can subscribe to; `pet.created` is the `petCreated` webhook.",
                    "enum": [
                      "pet.created"
                    ]
                  }
                },
                "description": {
                  "type": "string",
                  "description": "What the endpoint is for.",
                  "maxLength": 500,
                  "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
                },
                "status": {
                  "type": "string",
                  "description": "`enabled`, deliveries are made; `disabled`, none is (deliveries waiting resume if it\nis enabled again within their 3 days), and `disabledReason` says why.\n",
                  "enum": [
                    "enabled",
                    "disabled"
                  ]
                },
                "disabledReason": {
                  "type": "string",
                  "description": "Why the endpoint is disabled (every delivery failed for 3 days; or an operator disabled it).",
                  "maxLength": 1000
                },
                "createdAt": {
                  "type": "string",
                  "format": "date-time",
                  "description": "When it was created.",
                  "maxLength": 32
                }
              }
            },
            {
              "type": "object",
              "required": [
                "secret"
              ],
              "properties": {
                "secret": {
                  "type": "string",
                  "description": "A signing secret: `whsec_` and the base64 of 32 random bytes, which are the HMAC key.\nKeep it as a password is kept.\n",
                  "pattern": "^whsec_[A-Za-z0-9+/]{43}=$",
                  "maxLength": 50
                }
              }
            }
          ]
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "Subscribe an endpoint to events",
      "readOnlyHint": false,
      "destructiveHint": false,
      "idempotentHint": false,
      "openWorldHint": false
    },
    "call": {
      "method": "POST",
      "path": "/v1/webhook-endpoints",
      "arguments": [],
      "body": "body",
      "successes": [
        201
      ],
      "pages": false
    },
    "scopes": [
      [
        "webhooks:manage"
      ]
    ]
  },
  {
    "name": "getWebhookEndpoint",
    "title": "Fetch one of your webhook endpoints",
    "description": "Fetch one of your webhook endpoints\n\nThe endpoint, with its last delivery attempts (newest first, at most 10): when a\ndelivery fails, or the service disabled the endpoint, this says why. Another\nclient's endpoint is answered 404, as one that does not exist.\n\nNeeds a key with the scope `webhooks:manage`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "endpointId": {
          "type": "string",
          "pattern": "^we_[0-9A-Za-z]{16}$",
          "maxLength": 19,
          "description": "A webhook endpoint's identifier, as `createWebhookEndpoint` returned it."
        }
      },
      "required": [
        "endpointId"
      ],
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            200
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "description": "An endpoint and its last delivery attempts.",
          "allOf": [
            {
              "type": "object",
              "description": "A webhook endpoint as its owner sees it; never its secret.",
              "required": [
                "id",
                "url",
                "events",
                "status",
                "createdAt"
              ],
              "properties": {
                "id": {
                  "type": "string",
                  "description": "The endpoint's identifier.",
                  "pattern": "^we_[0-9A-Za-z]{16}$",
                  "maxLength": 19
                },
                "url": {
                  "type": "string",
                  "format": "uri",
                  "description": "Where events are POSTed.",
                  "maxLength": 2048
                },
                "events": {
                  "type": "array",
                  "description": "The events sent to it.",
                  "maxItems": 10,
                  "items": {
                    "type": "string",
                    "description": "An event a webhook endpoint can subscribe to; `pet.created` is the `petCreated` webhook.",
                    "enum": [
                      "pet.created"
                    ]
                  }
                },
                "description": {
                  "type": "string",
                  "description": "What the endpoint is for.",
                  "maxLength": 500,
                  "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
                },
                "status": {
                  "type": "string",
                  "description": "`enabled`, deliveries are made; `disabled`, none is (deliveries waiting resume if it\nis enabled again within their 3 days), and `disabledReason` says why.\n",
                  "enum": [
                    "enabled",
                    "disabled"
                  ]
                },
                "disabledReason": {
                  "type": "string",
                  "description": "Why the endpoint is disabled (every delivery failed for 3 days; or an operator disabled it).",
                  "maxLength": 1000
                },
                "createdAt": {
                  "type": "string",
                  "format": "date-time",
                  "description": "When it was created.",
                  "maxLength": 32
                }
              }
            },
            {
              "type": "object",
              "required": [
                "recentAttempts"
              ],
              "properties": {
                "recentAttempts": {
                  "type": "array",
                  "description": "The last delivery attempts to it, newest first.",
                  "maxItems": 10,
                  "items": {
                    "type": "object",
                    "description": "One attempt to deliver an event to an endpoint.",
                    "required": [
                      "eventId",
                      "at",
                      "outcome",
                      "durationMs"
                    ],
                    "properties": {
                      "eventId": {
                        "type": "string",
                        "description": "The event's `id` (its `webhook-id`).",
                        "pattern": "^evt_[0-9A-Za-z]{24}$",
                        "maxLength": 28
                      },
                      "at": {
                        "type": "string",
                        "format": "date-time",
                        "description": "When the attempt started.",
                        "maxLength": 32
                      },
                      "outcome": {
                        "type": "string",
                        "description": "`delivered` (a 2xx); `http_status` (another status); `timeout` (no answer within\n10 s); `connection_failed`; `refused_target` (the URL's name led to an address\nevents are never sent to).\n",
                        "enum": [
                          "delivered",
                          "http_status",
                          "timeout",
                          "connection_failed",
                          "refused_target"
                        ]
                      },
                      "status": {
                        "type": "integer",
                        "description": "The receiver's HTTP status, when it answered.",
                        "minimum": 100,
                        "maximum": 599
                      },
                      "durationMs": {
                        "type": "integer",
                        "description": "How long the attempt took, in milliseconds.",
                        "minimum": 0,
                        "maximum": 2147483647
                      },
                      "error": {
                        "type": "string",
                        "description": "What went wrong, when it did, in the service's words.",
                        "maxLength": 500
                      }
                    }
                  }
                }
              }
            }
          ]
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "Fetch one of your webhook endpoints",
      "readOnlyHint": true,
      "destructiveHint": false,
      "idempotentHint": true,
      "openWorldHint": false
    },
    "call": {
      "method": "GET",
      "path": "/v1/webhook-endpoints/{endpointId}",
      "arguments": [
        {
          "argument": "endpointId",
          "in": "path",
          "name": "endpointId"
        }
      ],
      "successes": [
        200
      ],
      "pages": false
    },
    "scopes": [
      [
        "webhooks:manage"
      ]
    ]
  },
  {
    "name": "deleteWebhookEndpoint",
    "title": "Delete one of your webhook endpoints",
    "description": "Delete one of your webhook endpoints\n\nStops every delivery to the endpoint, including those waiting for a retry, and\nforgets it. Another client's endpoint is answered 404.\n\nNeeds a key with the scope `webhooks:manage`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "endpointId": {
          "type": "string",
          "pattern": "^we_[0-9A-Za-z]{16}$",
          "maxLength": 19,
          "description": "A webhook endpoint's identifier, as `createWebhookEndpoint` returned it."
        }
      },
      "required": [
        "endpointId"
      ],
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            204
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "Delete one of your webhook endpoints",
      "readOnlyHint": false,
      "destructiveHint": true,
      "idempotentHint": true,
      "openWorldHint": false
    },
    "call": {
      "method": "DELETE",
      "path": "/v1/webhook-endpoints/{endpointId}",
      "arguments": [
        {
          "argument": "endpointId",
          "in": "path",
          "name": "endpointId"
        }
      ],
      "successes": [
        204
      ],
      "pages": false
    },
    "scopes": [
      [
        "webhooks:manage"
      ]
    ]
  },
  {
    "name": "rotateWebhookEndpointSecret",
    "title": "Rotate an endpoint's signing secret",
    "description": "Rotate an endpoint's signing secret\n\nMakes a new signing secret and returns it (shown this once). For 24 hours the old\nsecret keeps signing beside the new one (each delivery carries both signatures in\n`webhook-signature`), so a receiver can switch at its own pace; a second rotation\nwithin those hours ends the old one's grace at once. No request body.\n\nNeeds a key with the scope `webhooks:manage`.",
    "inputSchema": {
      "type": "object",
      "properties": {
        "endpointId": {
          "type": "string",
          "pattern": "^we_[0-9A-Za-z]{16}$",
          "maxLength": 19,
          "description": "A webhook endpoint's identifier, as `createWebhookEndpoint` returned it."
        }
      },
      "required": [
        "endpointId"
      ],
      "additionalProperties": false
    },
    "outputSchema": {
      "type": "object",
      "properties": {
        "status": {
          "type": "integer",
          "enum": [
            200
          ],
          "description": "The HTTP status of the operation's answer."
        },
        "headers": {
          "type": "object",
          "properties": {
            "RateLimit-Policy": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";q=[0-9]+;w=[0-9]+$",
              "description": "The quota of the API key's client, shared by all of its keys\n(draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w`\nseconds. Sent when rate limiting is on."
            },
            "RateLimit": {
              "type": "string",
              "maxLength": 64,
              "pattern": "^\"per-key\";r=[0-9]+;t=[0-9]+$",
              "description": "What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests\nremaining, `t` seconds until the window resets. Sent when rate limiting is on. A\nconditional read answered 304 is not counted: its `r` is what was left before it."
            },
            "API-Key-Expiration": {
              "type": "string",
              "maxLength": 29,
              "pattern": "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$",
              "description": "When the API key this request was made with expires, as an HTTP date (RFC 9110\n§5.6.7); absent for a key that does not expire. After that moment the key is refused\nwith 401: make a successor before it (`npm run keys -- rotate`)."
            }
          },
          "additionalProperties": false,
          "description": "The response headers the spec documents."
        },
        "body": {
          "type": "object",
          "description": "An endpoint's new signing secret.",
          "required": [
            "secret",
            "previousSecretExpiresAt"
          ],
          "properties": {
            "secret": {
              "type": "string",
              "description": "A signing secret: `whsec_` and the base64 of 32 random bytes, which are the HMAC key.\nKeep it as a password is kept.\n",
              "pattern": "^whsec_[A-Za-z0-9+/]{43}=$",
              "maxLength": 50
            },
            "previousSecretExpiresAt": {
              "type": "string",
              "format": "date-time",
              "description": "Until when the previous secret signs beside this one.",
              "maxLength": 32
            }
          }
        }
      },
      "required": [
        "status",
        "headers"
      ],
      "additionalProperties": false
    },
    "annotations": {
      "title": "Rotate an endpoint's signing secret",
      "readOnlyHint": false,
      "destructiveHint": false,
      "idempotentHint": false,
      "openWorldHint": false
    },
    "call": {
      "method": "POST",
      "path": "/v1/webhook-endpoints/{endpointId}/rotate-secret",
      "arguments": [
        {
          "argument": "endpointId",
          "in": "path",
          "name": "endpointId"
        }
      ],
      "successes": [
        200
      ],
      "pages": false
    },
    "scopes": [
      [
        "webhooks:manage"
      ]
    ]
  }
];
