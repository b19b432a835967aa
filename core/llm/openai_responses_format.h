#pragma once

#include "llm/wire_format.h"

namespace autocomp {

// OpenAI Responses (POST {base}/responses): typed SSE events; the default for openai::MODEL.
class OpenAiResponsesFormat final : public WireFormat
{
public:
    QString name() const override;
    WireRequest build(const LlmRequest &request, const QSet<QString> &dropped) const override;
    void feedEvent(const SseEvent &event, WireResult *result) const override;
    bool parseBody(const QByteArray &body, WireResult *result) const override;
};

} // namespace autocomp
