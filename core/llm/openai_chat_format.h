#pragma once

#include "llm/wire_format.h"

namespace autocomp {

// OpenAI Chat Completions (POST {base}/chat/completions): OpenAI itself with `#chat`, and every
// OpenAI-compatible server (vLLM, Ollama, Together, OpenRouter, ...).
class OpenAiChatFormat final : public WireFormat
{
public:
    QString name() const override;
    WireRequest build(const LlmRequest &request, const QSet<QString> &dropped) const override;
    void feedEvent(const SseEvent &event, WireResult *result) const override;
    bool parseBody(const QByteArray &body, WireResult *result) const override;
};

} // namespace autocomp
