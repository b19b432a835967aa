#pragma once

#include "llm/wire_format.h"

namespace autocomp {

// AWS Bedrock Converse (POST {base}/model/{id}/converse), non-streaming: ConverseStream uses AWS's
// binary event-stream framing rather than SSE.
class BedrockConverseFormat final : public WireFormat
{
public:
    QString name() const override;
    WireRequest build(const LlmRequest &request, const QSet<QString> &dropped) const override;
    void feedEvent(const SseEvent &event, WireResult *result) const override;
    bool parseBody(const QByteArray &body, WireResult *result) const override;
};

} // namespace autocomp
