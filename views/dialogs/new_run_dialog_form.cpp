// NewRunDialog's form: its fields (each with its YAML key in the tooltip), the group boxes that lay them out, the
// buttons and the validation they trigger. The class is declared in new_run_dialog.h.
#include "dialogs/new_run_dialog.h"

#include "editors/executor_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>

namespace autocomp {

namespace {

QSpinBox *spinBox(const QString &name, int min, int max)
{
    auto *box = new QSpinBox;
    box->setObjectName(name);
    box->setRange(min, max);
    return box;
}

// An error shown under the group it concerns, once the user tried to start.
QLabel *errorLabel(const QString &name)
{
    auto *label = new QLabel;
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setStyleSheet(QStringLiteral("QLabel { color: #d03030; }"));
    label->hide();
    return label;
}

// The providers the picker offers: those that take a key, then the local servers that need none.
QStringList pickerProviders()
{
    return SecretStore::providers() + QStringList{QStringLiteral("ollama"), QStringLiteral("openai-compatible")};
}

} // namespace

// The target, problem and agent pickers, each target's state in its tooltip.
void NewRunDialog::createTargetFields()
{
    m_target = new QComboBox;
    m_target->setObjectName(QStringLiteral("targetCombo"));
    m_target->addItems(m_repository.targetNames());
    m_targetState = new QLabel;
    m_targetState->setObjectName(QStringLiteral("targetState"));
    m_targetState->setWordWrap(true);
    m_targetState->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Each target's state in its tooltip, so an absent one is seen before it is picked.
    for (int i = 0; i < m_target->count(); ++i) {
        QString error;
        if (const auto t = m_repository.target(m_target->itemText(i), &error))
            m_target->setItemData(i, t->available() ? tr("available: %1").arg(t->description) : t->absenceReason(),
                                  Qt::ToolTipRole);
        else
            m_target->setItemData(i, tr("invalid: %1").arg(error), Qt::ToolTipRole);
    }
    m_problem = new QComboBox;
    m_problem->setObjectName(QStringLiteral("problemCombo"));
    m_agent = new QComboBox;
    m_agent->setObjectName(QStringLiteral("agentCombo"));
    m_agent->addItems(m_repository.agentNames());
}

// The search's parameters (search.*), each with its YAML key in the tooltip; the schedule seed's row is returned for
// the form.
QLayout *NewRunDialog::createSearchFields()
{
    m_beamWidth = spinBox(QStringLiteral("beamWidth"), 1, 64);
    m_beamWidth->setToolTip(
        tr("B: how many of the best candidates each iteration keeps and builds on (search.beam_width)"));
    m_plansPerParent = spinBox(QStringLiteral("plansPerParent"), 1, 64);
    m_plansPerParent->setToolTip(
        tr("N: optimization plans asked of the planner for each candidate in the beam, one LLM call each "
           "(search.plans_per_parent)"));
    m_codePerPlan = spinBox(QStringLiteral("codePerPlan"), 1, 64);
    m_codePerPlan->setToolTip(
        tr("K: implementations written for each plan, one LLM call and one evaluation each (search.code_per_plan)"));
    m_iterations = spinBox(QStringLiteral("iterations"), 1, 1000);
    m_iterations->setToolTip(tr("Rounds of plan, write, evaluate and select (search.iterations)"));
    m_dropout = new QDoubleSpinBox;
    m_dropout->setObjectName(QStringLiteral("menuDropout"));
    m_dropout->setRange(0, 1);
    m_dropout->setSingleStep(0.05);
    m_dropout->setToolTip(tr("Probability that a menu item is left out of one plan prompt"));
    m_fixAttempts = spinBox(QStringLiteral("fixAttempts"), 0, 10);
    m_fixAttempts->setToolTip(
        tr("F: times a candidate that does not compile or gives wrong results is sent back to the LLM with "
           "its error, one call each (search.fix_attempts)"));
    m_editMode = new QCheckBox(tr("Search/replace edits instead of whole files"));
    m_editMode->setObjectName(QStringLiteral("editMode"));
    m_editMode->setToolTip(
        tr("The LLM answers with search/replace edits of the parent's code rather than a whole file: "
           "fewer output tokens on long kernels (search.edit_mode)"));
    m_feedback = new QCheckBox(tr("Give the planner the evaluator's hardware feedback"));
    m_feedback->setObjectName(QStringLiteral("feedback"));
    m_feedback->setChecked(true);
    m_feedback->setToolTip(
        tr("Plan prompts include the evaluator's hardware feedback lines on the parent (search.feedback)"));
    m_translateIters = spinBox(QStringLiteral("translateIters"), 0, 100);
    m_translateIters->setToolTip(
        tr("First iterations that translate the starting code (e.g. PyTorch to CUDA) with the agent's "
           "translation menu before optimizing (search.translate_iters; 0: none)"));
    m_seed = spinBox(QStringLiteral("seed"), 0, std::numeric_limits<int>::max());
    m_skipPlanning = new QCheckBox(tr("Skip planning"));
    m_skipPlanning->setObjectName(QStringLiteral("skipPlanning"));
    m_skipPlanning->setToolTip(
        tr("One call writes the code directly, reasoning first and still shown the menu, instead of a plan "
           "call and then code calls: N becomes distinct prompts per parent and K samples per prompt "
           "(search.skip_planning)"));
    m_oneShotMenu = new QCheckBox(tr("One-shot menu"));
    m_oneShotMenu->setObjectName(QStringLiteral("oneShotMenu"));
    m_oneShotMenu->setToolTip(
        tr("Before planning for a parent, one extra call shows a model its code, the architecture, the ISA "
           "and the menu and asks for about 10 new strategies; they join that parent's menu before dropout "
           "(search.menu_strategy: one-shot)"));
    m_exampleRate = new QDoubleSpinBox;
    m_exampleRate->setObjectName(QStringLiteral("exampleRate"));
    m_exampleRate->setRange(0.0, 1.0);
    m_exampleRate->setSingleStep(0.05);
    m_exampleRate->setDecimals(2);
    m_exampleRate->setSpecialValueText(tr("off"));
    m_exampleRate->setToolTip(
        tr("On: once per parent a model picks the agent's code examples relevant to its code and ISA, and "
           "each picked one goes into a plan prompt with this probability (search.example_rate; Autocomp "
           "suggests 0.25). Off: every example goes in with probability 0.25, no model asked"));
    m_translateScore = new QCheckBox(tr("Score translations"));
    m_translateScore->setObjectName(QStringLiteral("translateScore"));
    m_translateScore->setChecked(true);
    m_translateScore->setToolTip(
        tr("During translation iterations a model scores each translated candidate 0-10 for completeness; "
           "a partial translation never enters the beam, and translation ends early once every beam "
           "candidate scores at least 9 (search.translate_score)"));
    m_translatePerf = new QDoubleSpinBox;
    m_translatePerf->setObjectName(QStringLiteral("translatePerfThreshold"));
    m_translatePerf->setRange(1.0, 1000.0);
    m_translatePerf->setDecimals(1);
    m_translatePerf->setValue(15.0);
    m_translatePerf->setPrefix(tr("at most "));
    m_translatePerf->setSuffix(tr("× slower"));
    m_translatePerf->setToolTip(
        tr("How much slower than its parent a translated candidate may be and still enter the beam "
           "(search.translate_perf_threshold, default 15); no effect outside translation"));
    m_seed->setToolTip(
        tr("Seeds the menu dropout and the other random choices, so a run can be repeated (search.seed)"));
    m_schedule = new QLineEdit;
    m_schedule->setObjectName(QStringLiteral("scheduleSeed"));
    m_schedule->setPlaceholderText(tr("none (a run id or a schedule file)"));
    m_schedule->setToolTip(
        tr("The menu choices along an earlier run's best path (its id) or a schedule file: the first steps "
           "follow them, then the search goes on as usual (search.schedule)"));
    auto *browse = new QPushButton(tr("Browse…"));
    browse->setObjectName(QStringLiteral("scheduleBrowseButton"));
    connect(browse, &QPushButton::clicked, this, &NewRunDialog::browseSchedule);
    auto *scheduleRow = new QHBoxLayout;
    scheduleRow->addWidget(m_schedule, 1);
    scheduleRow->addWidget(browse);
    return scheduleRow;
}

// The budget (budget.*) and evaluation (evaluation.*) fields, and the executor editor.
void NewRunDialog::createLimitFields()
{
    m_maxUsd = new QDoubleSpinBox;
    m_maxUsd->setObjectName(QStringLiteral("budgetUsd"));
    m_maxUsd->setRange(0, 1e6);
    m_maxUsd->setPrefix(QStringLiteral("$"));
    m_maxUsd->setSpecialValueText(tr("no limit"));
    m_maxCalls = spinBox(QStringLiteral("budgetCalls"), 0, std::numeric_limits<int>::max());
    m_maxCalls->setSpecialValueText(tr("no limit"));
    m_maxUsd->setToolTip(tr("The run stops once its LLM calls cost this much (budget.max_usd)"));
    m_maxCalls->setToolTip(tr("The run stops after this many LLM calls (budget.max_llm_calls)"));
    m_maxHours = new QDoubleSpinBox;
    m_maxHours->setObjectName(QStringLiteral("budgetHours"));
    m_maxHours->setRange(0, 10000);
    m_maxHours->setSuffix(tr(" h"));
    m_maxHours->setSpecialValueText(tr("no limit"));
    m_maxHours->setToolTip(tr("The run stops after this much wall time (budget.max_hours)"));

    m_executor = new ExecutorEditor;
    m_sandbox = new QComboBox;
    m_sandbox->setObjectName(QStringLiteral("sandboxCombo"));
    m_sandbox->addItems({QStringLiteral("auto"), QStringLiteral("off"), QStringLiteral("required")});
    m_sandbox->setToolTip(
        tr("auto: bubblewrap when available; required: refuse to evaluate without it (evaluation.sandbox)"));
    m_profile = new QCheckBox(tr("Cache profile of each candidate (callgrind; slow)"));
    m_profile->setObjectName(QStringLiteral("profile"));
    m_profile->setToolTip(
        tr("Runs one call of every candidate under callgrind's cache simulation and gives the planner "
           "its D1/LL miss rates and instruction count (evaluation.profile)"));
}

// Two columns of group boxes: what to optimize and the models; the search, the budget and where evaluations run.
QWidget *NewRunDialog::buildForm(QLayout *scheduleRow)
{
    auto *what = new QGroupBox(tr("What to optimize"));
    auto *whatForm = new QFormLayout(what);
    whatForm->addRow(tr("&Target:"), m_target);
    whatForm->addRow(QString(), m_targetState);
    whatForm->addRow(tr("&Problem:"), m_problem);
    whatForm->addRow(tr("&Agent:"), m_agent);
    m_whatErrors = errorLabel(QStringLiteral("targetErrors"));
    whatForm->addRow(m_whatErrors);

    m_modelProvider = new QComboBox;
    m_modelProvider->setObjectName(QStringLiteral("modelProviderCombo"));
    m_modelProvider->setToolTip(tr("The provider of the model to add, with where its API key comes from"));
    for (const QString &provider : pickerProviders())
        m_modelProvider->addItem(provider, provider);
    m_modelName = new QComboBox;
    m_modelName->setObjectName(QStringLiteral("modelNameCombo"));
    m_modelName->setEditable(true);
    m_modelName->setInsertPolicy(QComboBox::NoInsert);
    m_modelName->setToolTip(tr("The model's name as the provider knows it; Add puts it in the plan or code models"));
    m_modelName->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_modelName->setMinimumContentsLength(14);
    connect(m_modelProvider, &QComboBox::currentIndexChanged, this, &NewRunDialog::fillModelNames);
    auto *picker = new QHBoxLayout;
    auto *pickerLabel = new QLabel(tr("&Model:"));
    pickerLabel->setBuddy(m_modelProvider);
    picker->addWidget(pickerLabel);
    picker->addWidget(m_modelProvider, 3);
    picker->addWidget(m_modelName, 2);
    m_modelKeys = new QLabel;
    m_modelKeys->setObjectName(QStringLiteral("modelKeyStatus"));
    m_modelKeys->setWordWrap(true);
    m_modelKeys->setTextFormat(Qt::RichText);
    m_modelKeys->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelErrors = errorLabel(QStringLiteral("modelErrors"));

    auto *models = new QGroupBox(tr("Models"));
    auto *modelsOuter = new QVBoxLayout(models);
    modelsOuter->addLayout(picker);
    auto *modelsLayout = new QHBoxLayout;
    modelsLayout->addWidget(createModelList(QStringLiteral("planModels"), &m_planModels, tr("Plan models")));
    modelsLayout->addWidget(
        createModelList(QStringLiteral("codeModels"), &m_codeModels, tr("Code models (empty: the plan models)")));
    modelsOuter->addLayout(modelsLayout, 1);
    modelsOuter->addWidget(m_modelKeys);
    modelsOuter->addWidget(m_modelErrors);

    auto *search = new QGroupBox(tr("Search"));
    auto *searchLayout = new QVBoxLayout(search);
    auto *searchForm = new QFormLayout;
    searchForm->addRow(tr("&Beam width (B):"), m_beamWidth);
    searchForm->addRow(tr("Plans per parent (&N):"), m_plansPerParent);
    searchForm->addRow(tr("Code per plan (&K):"), m_codePerPlan);
    searchForm->addRow(tr("&Iterations:"), m_iterations);
    searchForm->addRow(tr("Menu &dropout:"), m_dropout);
    searchForm->addRow(tr("&Fix attempts:"), m_fixAttempts);
    searchForm->addRow(tr("Edit mode:"), m_editMode);
    searchForm->addRow(tr("Feedback:"), m_feedback);
    auto *planningRow = new QHBoxLayout;
    planningRow->addWidget(m_skipPlanning);
    planningRow->addWidget(m_oneShotMenu);
    planningRow->addStretch(1);
    searchForm->addRow(tr("Planning:"), planningRow);
    searchForm->addRow(tr("E&xample rate:"), m_exampleRate);
    searchForm->addRow(tr("T&ranslation iterations:"), m_translateIters);
    auto *translationRow = new QHBoxLayout;
    translationRow->addWidget(m_translateScore);
    translationRow->addWidget(m_translatePerf, 1);
    searchForm->addRow(tr("Translation:"), translationRow);
    searchForm->addRow(tr("S&eed:"), m_seed);
    // A label given a layout has no buddy, and would show its '&': the buddy is set by hand.
    auto *scheduleLabel = new QLabel(tr("Sched&ule seed:"));
    scheduleLabel->setBuddy(m_schedule);
    searchForm->addRow(scheduleLabel, scheduleRow);
    m_estimate = new QLabel;
    m_estimate->setObjectName(QStringLiteral("runEstimate"));
    m_estimate->setWordWrap(true);
    m_estimate->setToolTip(
        tr("Upper bounds: the first iteration starts from one candidate, and fixes are sent only for "
           "candidates that fail to compile or give wrong results"));
    m_searchErrors = errorLabel(QStringLiteral("searchErrors"));
    // Below the form, not in a spanning row: QFormLayout gives a wrapped label too little height.
    searchLayout->addLayout(searchForm);
    searchLayout->addWidget(m_estimate);
    searchLayout->addWidget(m_searchErrors);

    auto *limits = new QGroupBox(tr("Budget and evaluation"));
    auto *limitsForm = new QFormLayout(limits);
    limitsForm->addRow(tr("Max d&ollars:"), m_maxUsd);
    limitsForm->addRow(tr("Max LLM &calls:"), m_maxCalls);
    limitsForm->addRow(tr("Max &hours:"), m_maxHours);
    limitsForm->addRow(tr("Sandbo&x:"), m_sandbox);
    limitsForm->addRow(tr("Profile:"), m_profile);
    m_limitsErrors = errorLabel(QStringLiteral("limitsErrors"));
    limitsForm->addRow(m_limitsErrors);

    auto *where = new QGroupBox(tr("Where evaluations run"));
    where->setObjectName(QStringLiteral("executorGroup"));
    auto *whereLayout = new QVBoxLayout(where);
    whereLayout->addWidget(m_executor);
    m_executorErrors = errorLabel(QStringLiteral("executorErrors"));
    whereLayout->addWidget(m_executorErrors);

    auto *columns = new QHBoxLayout;
    auto *left = new QVBoxLayout;
    left->addWidget(what);
    left->addWidget(models, 1);
    auto *right = new QVBoxLayout;
    right->addWidget(search);
    right->addWidget(limits);
    right->addWidget(where);
    right->addStretch(1);
    columns->addLayout(left, 1);
    columns->addLayout(right, 1);
    auto *form = new QWidget;
    form->setObjectName(QStringLiteral("newRunForm"));
    form->setLayout(columns);
    return form;
}

QDialogButtonBox *NewRunDialog::createButtons()
{
    auto *buttons = new QDialogButtonBox;
    m_startButton = buttons->addButton(tr("&Start Run"), QDialogButtonBox::AcceptRole);
    m_startButton->setObjectName(QStringLiteral("startButton"));
    auto *cancel = buttons->addButton(QDialogButtonBox::Cancel);
    cancel->setObjectName(QStringLiteral("cancelButton"));
    auto *save = buttons->addButton(tr("Save &YAML…"), QDialogButtonBox::ActionRole);
    save->setObjectName(QStringLiteral("saveYamlButton"));
    auto *load = buttons->addButton(tr("&Load YAML…"), QDialogButtonBox::ActionRole);
    load->setObjectName(QStringLiteral("loadYamlButton"));
    connect(save, &QPushButton::clicked, this, &NewRunDialog::saveYamlClicked);
    connect(load, &QPushButton::clicked, this, &NewRunDialog::loadYamlClicked);
    connect(buttons, &QDialogButtonBox::accepted, this, &NewRunDialog::startClicked);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    return buttons;
}

// Every field revalidates the configuration (after a short delay) when it changes.
void NewRunDialog::connectValidation()
{
    connect(m_target, &QComboBox::currentTextChanged, this, &NewRunDialog::targetChanged);
    connect(m_executor, &ExecutorEditor::changed, this, &NewRunDialog::scheduleValidation);
    for (QComboBox *combo : {m_problem, m_agent, m_sandbox})
        connect(combo, &QComboBox::currentTextChanged, this, &NewRunDialog::scheduleValidation);
    for (QSpinBox *box : {m_beamWidth, m_plansPerParent, m_codePerPlan, m_iterations, m_fixAttempts, m_translateIters,
                          m_seed, m_maxCalls})
        connect(box, &QSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    for (QDoubleSpinBox *box : {m_dropout, m_maxUsd, m_maxHours})
        connect(box, &QDoubleSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    connect(m_editMode, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_feedback, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    for (QCheckBox *box : {m_skipPlanning, m_oneShotMenu, m_translateScore})
        connect(box, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    for (QDoubleSpinBox *box : {m_exampleRate, m_translatePerf})
        connect(box, &QDoubleSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    connect(m_profile, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_schedule, &QLineEdit::textChanged, this, &NewRunDialog::scheduleValidation);
}

QWidget *NewRunDialog::createModelList(const QString &name, QListWidget **list, const QString &title)
{
    auto *box = new QWidget;
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(title));
    *list = new QListWidget;
    QListWidget *l = *list;
    l->setObjectName(name);
    l->setToolTip(tr("Model strings such as openai::gpt-5.2, anthropic::claude-opus-4-5, vllm::MODEL or "
                     "openai-compatible@URL::MODEL; double-click to edit"));
    layout->addWidget(l, 1);
    auto *buttons = new QHBoxLayout;
    auto *add = new QPushButton(tr("Add"));
    add->setObjectName(name + QStringLiteral("AddButton"));
    auto *remove = new QPushButton(tr("Remove"));
    remove->setObjectName(name + QStringLiteral("RemoveButton"));
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    add->setToolTip(tr("Adds the model picked above; double-click an entry to edit it"));
    connect(add, &QPushButton::clicked, this, [this, l] {
        auto *item = new QListWidgetItem(pickedModel(), l);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        l->setCurrentItem(item);
    });
    connect(remove, &QPushButton::clicked, this, [this, l] {
        delete l->currentItem();
        scheduleValidation();
    });
    connect(l->model(), &QAbstractItemModel::dataChanged, this, &NewRunDialog::scheduleValidation);
    connect(l->model(), &QAbstractItemModel::rowsInserted, this, &NewRunDialog::scheduleValidation);
    connect(l->model(), &QAbstractItemModel::rowsRemoved, this, &NewRunDialog::scheduleValidation);
    return box;
}

} // namespace autocomp
