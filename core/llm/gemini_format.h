#pragma once

#include "llm/wire_format.h"

namespace autocomp {

// Google Gemini generateContent / streamGenerateContent?alt=sse, for the Gemini API and Vertex AI alike
// (they differ in base URL and authentication only).
class GeminiFormat final : public WireFormat
{
public:
    QString name() const override;
    WireRequest build(const LlmRequest &request, const QSet<QString> &dropped) const override;
    void feedEvent(const SseEvent &event, WireResult *result) const override;
    bool parseBody(const QByteArray &body, WireResult *result) const override;
};

} // namespace autocomp
