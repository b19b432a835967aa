#include "frame/welcome_page.h"

#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace autocomp {

WelcomePage::WelcomePage(const QString &exampleResource, QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("welcomePanel"));
    auto *outer = new QHBoxLayout(this);
    auto *column = new QWidget;
    column->setMaximumWidth(760);
    auto *layout = new QVBoxLayout(column);
    outer->addStretch(1);
    outer->addWidget(column, 4);
    outer->addStretch(1);

    auto *text = new QLabel;
    text->setObjectName(QStringLiteral("welcomeText"));
    text->setWordWrap(true);
    text->setTextFormat(Qt::RichText);
    text->setTextInteractionFlags(Qt::TextBrowserInteraction);
    text->setText(
        tr("<h1>Autocomp Workbench</h1>"
           "<p>Optimizes a kernel with an LLM-driven beam search: the LLM plans one optimization at a time, "
           "writes the code, and every candidate is compiled, tested and benchmarked on the target.</p>"
           "<h3>Your first run</h3>"
           "<p>Press <b>New Run…</b> and pick a <b>target</b> (the machine the kernel runs on: <code>cpu</code> "
           "works everywhere) and a <b>problem</b>. Then pick or add a <b>model</b>: the picker shows whether "
           "its API key is stored in the keychain, comes from the environment (<code>OPENAI_API_KEY</code>, "
           "<code>ANTHROPIC_API_KEY</code>, …) or is missing, and a local vLLM or Ollama server needs none. "
           "Keys are stored in Settings. Press <b>Start Run</b>: the candidates appear here as they are "
           "written and measured.</p>"));
    layout->addWidget(text);

    auto *newRun = new QPushButton(tr("New Run…"));
    newRun->setObjectName(QStringLiteral("welcomeNewRunButton"));
    newRun->setDefault(true);
    newRun->setToolTip(tr("Pick a target, a problem and a model, and start a search (Ctrl+N)"));
    connect(newRun, &QPushButton::clicked, this, &WelcomePage::newRunRequested);
    auto *firstRow = new QHBoxLayout;
    firstRow->addWidget(newRun);
    firstRow->addStretch(1);
    layout->addLayout(firstRow);

    auto *around = new QLabel(tr("<h3>Or look around first</h3>"
                                 "<p>The example run shows what a finished run looks like. Runs started with "
                                 "<code>autocomp run config.yaml</code> appear here too.</p>"));
    around->setObjectName(QStringLiteral("welcomeAroundText"));
    around->setWordWrap(true);
    around->setTextFormat(Qt::RichText);
    layout->addWidget(around);

    auto *buttons = new QHBoxLayout;
    auto *example = new QPushButton(tr("Open the example run"));
    example->setObjectName(QStringLiteral("loadExampleButton"));
    if (QFile::exists(exampleResource)) {
        example->setToolTip(tr("Imports a run recorded against the local test LLM server into this store"));
    } else {
        example->setEnabled(false);
        example->setToolTip(tr("This build has no bundled example run (%1 is missing)").arg(exampleResource));
    }
    connect(example, &QPushButton::clicked, this, &WelcomePage::exampleRequested);
    auto *importButton = new QPushButton(tr("Import Run Archive…"));
    importButton->setObjectName(QStringLiteral("welcomeImportButton"));
    connect(importButton, &QPushButton::clicked, this, &WelcomePage::importRequested);
    auto *openButton = new QPushButton(tr("Open Store…"));
    openButton->setObjectName(QStringLiteral("welcomeOpenStoreButton"));
    connect(openButton, &QPushButton::clicked, this, &WelcomePage::openStoreRequested);
    buttons->addWidget(example);
    buttons->addWidget(importButton);
    buttons->addWidget(openButton);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    if (!example->isEnabled()) {
        auto *missing = new QLabel(example->toolTip());
        missing->setObjectName(QStringLiteral("exampleMissingLabel"));
        missing->setWordWrap(true);
        layout->addWidget(missing);
    }

    m_storeLabel = new QLabel;
    m_storeLabel->setObjectName(QStringLiteral("welcomeStoreLabel"));
    m_storeLabel->setWordWrap(true);
    m_storeLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addSpacing(12);
    layout->addWidget(m_storeLabel);
    layout->addStretch(1);
}

void WelcomePage::setStorePath(const QString &nativePath)
{
    m_storeLabel->setText(tr("The run store %1 has no runs yet.").arg(nativePath));
}

} // namespace autocomp
