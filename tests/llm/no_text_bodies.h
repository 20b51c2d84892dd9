#pragma once
// 200 bodies in the shapes the providers document for answers that carry no text to
// validate: refusals, safety blocks, content filters, tool calls only; and the answers
// whose text sits somewhere other than the usual field (content as an array of parts,
// Anthropic's text instead of the forced tool). Written for these tests after each
// provider's API reference; the ids, models and counts are made up.

namespace dispatchd::test::bodies {

// OpenAI chat completion, structured outputs: the model declines, `content` is null and
// `refusal` holds its words; finish_reason stays "stop".
inline constexpr const char* k_openai_refusal = R"({
  "id": "chatcmpl-AAbRefusal01", "object": "chat.completion", "created": 1727000000,
  "model": "gpt-4o-2024-08-06",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": null, "refusal": "I'm sorry, I can't help with that request."},
    "logprobs": null,
    "finish_reason": "stop"
  }],
  "usage": {"prompt_tokens": 812, "completion_tokens": 11, "total_tokens": 823},
  "system_fingerprint": "fp_dispatchd"
})";

// OpenAI chat completion where the model called a function instead of writing text.
inline constexpr const char* k_openai_tool_calls = R"({
  "id": "chatcmpl-AAbTools01", "object": "chat.completion", "created": 1727000000,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant", "content": null, "refusal": null,
      "tool_calls": [{"id": "call_Q1w2e3", "type": "function",
                      "function": {"name": "lookup_order", "arguments": "{\"order\":\"ORD-1001\"}"}}]
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 640, "completion_tokens": 18, "total_tokens": 658}
})";

// Azure OpenAI: the output filter withheld the completion. finish_reason content_filter,
// no content, the per-category verdicts in choices[0].content_filter_results.
inline constexpr const char* k_azure_content_filter = R"({
  "id": "chatcmpl-AzFiltered01", "object": "chat.completion", "created": 1727000000,
  "model": "gpt-4o-2024-08-06",
  "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
    "hate": {"filtered": false, "severity": "safe"}, "self_harm": {"filtered": false, "severity": "safe"},
    "sexual": {"filtered": false, "severity": "safe"}, "violence": {"filtered": false, "severity": "safe"}}}],
  "choices": [{
    "index": 0,
    "finish_reason": "content_filter",
    "message": {"role": "assistant", "content": null},
    "content_filter_results": {
      "hate": {"filtered": false, "severity": "safe"}, "self_harm": {"filtered": false, "severity": "safe"},
      "sexual": {"filtered": false, "severity": "safe"}, "violence": {"filtered": true, "severity": "medium"}}
  }],
  "usage": {"prompt_tokens": 530, "completion_tokens": 24, "total_tokens": 554}
})";

// Azure OpenAI as it also answers a filtered completion: the choice has no `message` at all,
// only the finish reason and the filter's verdicts, and the usage is billed.
inline constexpr const char* k_azure_content_filter_no_message = R"({
  "id": "chatcmpl-AzFiltered02", "object": "chat.completion", "created": 1733000000,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [{
    "index": 0,
    "finish_reason": "content_filter",
    "content_filter_results": {
      "hate": {"filtered": false, "severity": "safe"}, "self_harm": {"filtered": true, "severity": "high"},
      "sexual": {"filtered": false, "severity": "safe"}, "violence": {"filtered": false, "severity": "safe"}}
  }],
  "usage": {"prompt_tokens": 15, "completion_tokens": 19, "total_tokens": 34}
})";

// Mistral-style server (Magistral): content as an array of chunks, a thinking chunk first.
// The answer is split over two text chunks.
inline constexpr const char* k_mistral_chunks = R"({
  "id": "cmpl-5c0ffee5c0ffee", "object": "chat.completion", "created": 1727000000,
  "model": "magistral-medium-2509",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant", "tool_calls": null,
      "content": [
        {"type": "thinking", "thinking": [{"type": "text", "text": "The customer asks about an order."}]},
        {"type": "text", "text": "{\"action\":\"send_message\",\"recipient\":\"15551234567\","},
        {"type": "text", "text": "\"content\":\"On its way\",\"priority\":\"medium\"}"}
      ]
    },
    "finish_reason": "stop"
  }],
  "usage": {"prompt_tokens": 700, "completion_tokens": 90, "total_tokens": 790}
})";

// Gemini: the reply was blocked. The candidate has no content, finishReason SAFETY, and
// the rating that blocked it says so.
inline constexpr const char* k_gemini_safety = R"({
  "candidates": [{
    "finishReason": "SAFETY",
    "index": 0,
    "safetyRatings": [
      {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
      {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
      {"category": "HARM_CATEGORY_HARASSMENT", "probability": "MEDIUM", "blocked": true},
      {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"}
    ]
  }],
  "usageMetadata": {"promptTokenCount": 845, "candidatesTokenCount": 9, "totalTokenCount": 854},
  "modelVersion": "gemini-2.0-flash"
})";

// Gemini: the prompt was blocked before the model answered. No candidates; the reason and
// the ratings in promptFeedback.
inline constexpr const char* k_gemini_prompt_blocked = R"({
  "promptFeedback": {
    "blockReason": "SAFETY",
    "safetyRatings": [
      {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
      {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "HIGH"},
      {"category": "HARM_CATEGORY_HARASSMENT", "probability": "LOW"},
      {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"}
    ]
  },
  "usageMetadata": {"promptTokenCount": 731, "totalTokenCount": 731},
  "modelVersion": "gemini-2.0-flash"
})";

// Gemini: a prompt blocked for a reason without ratings.
inline constexpr const char* k_gemini_prohibited = R"({
  "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
  "usageMetadata": {"promptTokenCount": 12559, "totalTokenCount": 12559},
  "modelVersion": "gemini-1.5-flash-002"
})";

// Gemini: the candidate ended for another reason, with no text and a finishMessage.
inline constexpr const char* k_gemini_other = R"({
  "candidates": [{"content": {"role": "model"}, "finishReason": "OTHER", "index": 0,
                  "finishMessage": "The model stopped for an unspecified reason."}],
  "usageMetadata": {"promptTokenCount": 845, "totalTokenCount": 845},
  "modelVersion": "gemini-2.0-flash"
})";

// Anthropic: a streaming classifier stopped the model. stop_reason refusal, the text it
// had written so far, and stop_details naming the category.
inline constexpr const char* k_anthropic_refusal = R"({
  "id": "msg_01RefusalX", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
  "content": [{"type": "text", "text": "Hello.."}],
  "stop_reason": "refusal", "stop_sequence": null,
  "stop_details": {"type": "refusal", "category": "cyber",
                   "explanation": "This request was declined because it could enable cyber harm."},
  "usage": {"input_tokens": 920, "output_tokens": 4}
})";

// Anthropic: a refusal whose category and explanation are null, with nothing written.
inline constexpr const char* k_anthropic_bare_refusal = R"({
  "id": "msg_01RefusalY", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
  "content": [],
  "stop_reason": "refusal", "stop_sequence": null,
  "stop_details": {"type": "refusal", "category": null, "explanation": null},
  "usage": {"input_tokens": 920, "output_tokens": 0}
})";

// Anthropic: the model answered in text and never called the forced tool.
inline constexpr const char* k_anthropic_text_only = R"({
  "id": "msg_01TextOnly", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
  "content": [{"type": "text", "text": "Sure, I can help. What is your order number?"}],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 900, "output_tokens": 13}
})";

// Anthropic: an empty turn (no text, no tool call), as the API can end a turn.
inline constexpr const char* k_anthropic_empty = R"({
  "id": "msg_01EmptyTurn", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
  "content": [],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 900, "output_tokens": 3}
})";

}  // namespace dispatchd::test::bodies
