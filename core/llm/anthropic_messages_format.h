#pragma once

#include "llm/wire_format.h"

namespace autocomp {

// Anthropic Messages (POST {base}/v1/messages, anthropic-version 2023-06-01), with extended thinking.
class AnthropicMessagesFormat final : public WireFormat
{
public:
    QString name() const override;
    WireRequest build(const LlmRequest &request, const QSet<QString> &dropped) const override;
    void feedEvent(const SseEvent &event, WireResult *result) const override;
    bool parseBody(const QByteArray &body, WireResult *result) const override;
};

} // namespace autocomp
