#include "pdf/poppler_pdf_reader.h"

#include "agents/agent_builder.h"

#include <poppler-qt6.h>

#include <QFileInfo>

#include <memory>

namespace autocomp {

std::optional<QString> PopplerPdfReader::read(const QString &path, QString *error)
{
    if (!QFileInfo::exists(path)) {
        *error = QStringLiteral("%1: does not exist").arg(path);
        return std::nullopt;
    }
    const std::unique_ptr<Poppler::Document> document = Poppler::Document::load(path);
    if (!document) {
        *error = QStringLiteral("%1: not a PDF Poppler can read").arg(path);
        return std::nullopt;
    }
    if (document->isLocked()) {
        *error = QStringLiteral("%1: the PDF is encrypted").arg(path);
        return std::nullopt;
    }
    QString text;
    for (int i = 0; i < document->numPages(); ++i) {
        const std::unique_ptr<Poppler::Page> page = document->page(i);
        if (!page)
            continue;
        const QString pageText = page->text(QRectF()).trimmed();
        if (!pageText.isEmpty())
            text += pageText + QStringLiteral("\n\n");
    }
    return text;
}

void PopplerPdfReader::install() { AgentBuilder::setPdfReader(&PopplerPdfReader::read); }

} // namespace autocomp
