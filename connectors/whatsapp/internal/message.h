#pragma once
#ifndef DISPATCHD_INTERNAL_CONNECTORS
#error "connectors/whatsapp/internal/ is private to connectors/: include the module's public headers instead"
#endif
// Normalizing one inbound message object by its type (internal to the connector).

#include <rapidjson/document.h>

#include "connectors/whatsapp/webhook.h"

namespace dispatchd::whatsapp::detail {

// Sets out.kind, text, answerable, media, reply_id, context_id, forwarded and errors from
// `message` (an object). REQUIRES: out.type holds message.type.
void normalize_message(const rapidjson::Value& message, InboundMessage& out);

}  // namespace dispatchd::whatsapp::detail
